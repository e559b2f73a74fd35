import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/emulator/routing/candidates.js';
import { PlainFrames, topLevel } from '../../src/emulator/routing/plain-frames.js';

const candidate = { slug: 'up', model: { id: 'bench/lorem' } } as unknown as Candidate;
/** The gateway's id for the stream's chunks (an upstream may repeat one id over all its answers). */
const ID = 'gen-9-own';
type Body = Record<string, unknown>;

/** An emulator-like chunk: the members before `choices`, one choice, and what `extra` adds after it. */
function chunk(delta: Body, finish: string | null = null, extra: Body = {}, head: Body = { id: 'gen-1-abc', object: 'chat.completion.chunk', created: 1, model: 'local/lorem', provider: 'local-alpha' }): string {
  return JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: finish, logprobs: null }], ...extra });
}

/** What the parse path makes of a chunk: the same members under the gateway's model, provider and id. */
const relabelled = (data: string) => ({ ...(JSON.parse(data) as Body), model: 'bench/lorem', provider: 'up', id: ID });

describe("the gateway's frames of plain chunks", () => {
  it('frames each plain chunk as the parse path would, its content counted, once the pattern is kept too', () => {
    const texts = ['Garden', ' open', ' "usage"', ' {"error":1}', '"finish_reason":null', ' é\u00e9 🙂', ' back\\slash\nline', '', ' "model":"local/lorem"', 'usage', 'error'];
    const first = JSON.parse(chunk({ role: 'assistant', content: 'Hi' })) as Body;
    const frames = new PlainFrames(first, candidate, ID);
    for (const content of [...texts, ...texts]) {
      const data = chunk({ role: 'assistant', content });
      const out = frames.frame(data);
      expect(out, content).toMatch(/^data: .*\n\n$/s);
      expect(JSON.parse(out!.slice(6))).toEqual(relabelled(data));
      expect(frames.content).toBe(content);
    }
  });

  it('leaves to the parse path what is not plain, before and after a pattern is kept', () => {
    const frames = new PlainFrames(JSON.parse(chunk({ role: 'assistant', content: 'Hi' })) as Body, candidate, ID);
    const plain = chunk({ role: 'assistant', content: 'a' });
    const notPlain = [
      chunk({ role: 'assistant', content: '' }, 'stop'),
      chunk({ role: 'assistant', content: 'a' }, null, { usage: { prompt_tokens: 1 } }),
      chunk({ role: 'assistant', content: 'a' }, null, { error: { code: 502 } }),
      // A second model member (JSON.parse takes the last): text relabelling would leave it as it came.
      `${chunk({ role: 'assistant', content: 'a' }).slice(0, -1)},"model":"local/lorem"}`,
      chunk({ role: 'assistant', content: 'a' }, null, { x: { provider: 'local-alpha' } }),
      // Reasoning beside text under DeepSeek's name: the parse path renames it `reasoning`.
      chunk({ role: 'assistant', content: 'a', reasoning_content: 'hmm' }),
    ];
    for (const data of notPlain) expect(frames.frame(data), data).toBeUndefined();
    expect(frames.frame(plain)).toBeDefined();
    expect(frames.frame(plain)).toBeDefined();
    for (const data of notPlain) expect(frames.frame(data), data).toBeUndefined();
    // Another shape of plain chunk (no role): framed too, and kept as the pattern from then on.
    for (const content of ['b', 'c\\"']) {
      const data = chunk({ content });
      expect(JSON.parse(frames.frame(data)!.slice(6))).toEqual(relabelled(data));
    }
  });

  it('adds the provider to chunks of an upstream that names none', () => {
    const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'local/lorem', system_fingerprint: 'fp' };
    const frames = new PlainFrames(JSON.parse(chunk({ role: 'assistant', content: '' }, null, {}, head)) as Body, candidate, ID);
    for (const content of ['one', ' two', ' three']) {
      const data = chunk({ content }, null, {}, head);
      const out = frames.frame(data)!;
      expect(JSON.parse(out.slice(6))).toEqual(relabelled(data));
      expect(out.endsWith(',"provider":"up"}\n\n')).toBe(true);
    }
  });

  it("gives plain chunks the gateway's id, adds it to an upstream's that have none, and parses one with another id", () => {
    const frames = new PlainFrames(JSON.parse(chunk({ role: 'assistant', content: '' })) as Body, candidate, ID);
    for (const content of ['one', ' two']) expect(frames.frame(chunk({ content }))!.startsWith(`data: {"id":"${ID}",`)).toBe(true);
    const other = { id: 'gen-2-other', object: 'chat.completion.chunk', created: 1, model: 'local/lorem', provider: 'local-alpha' };
    expect(frames.frame(chunk({ content: 'x' }, null, {}, other))).toBeUndefined();
    const none = { object: 'chat.completion.chunk', created: 1, model: 'local/lorem', provider: 'local-alpha' };
    const bare = new PlainFrames(JSON.parse(chunk({ role: 'assistant', content: '' }, null, {}, none)) as Body, candidate, ID);
    for (const content of ['one', ' two']) {
      const data = chunk({ content }, null, {}, none);
      const out = bare.frame(data)!;
      expect(JSON.parse(out.slice(6))).toEqual(relabelled(data));
      expect(out.endsWith(`,"id":"${ID}"}\n\n`)).toBe(true);
    }
  });

  it("relabels only the chunk's own model, never one in an object inside it, and keeps llama.cpp's order on the fast path", () => {
    const first = JSON.parse(chunk({ role: 'assistant', content: 'Hi' })) as Body;
    const frames = new PlainFrames(first, candidate, ID);
    expect(frames.frame(chunk({ content: 'a' }))).toBeDefined();
    // No model of its own, one nested (the same text as the first chunk's model member): parsed, the nested one kept.
    const nested = chunk({ content: 'b' }, null, { tool: { model: 'local/lorem' } }, { id: 'gen-1-abc', object: 'chat.completion.chunk', created: 1, provider: 'local-alpha' });
    expect(frames.frame(nested)).toBeUndefined();
    const inArray = chunk({ content: 'b' }, null, { tools: [{ model: 'local/lorem' }] }, { id: 'gen-1-abc', provider: 'local-alpha' });
    expect(frames.frame(inArray)).toBeUndefined();
    // llama.cpp: `choices` first, then the chunk's members; a brace and a bracket in the content too.
    const llama = (content: string) => JSON.stringify({ choices: [{ finish_reason: null, index: 0, delta: { content } }], created: 1, id: 'chatcmpl-1', model: 'local/lorem', system_fingerprint: 'b1', object: 'chat.completion.chunk' });
    const frames2 = new PlainFrames(JSON.parse(llama('')) as Body, candidate, ID);
    for (const content of ['one', ' {two]', ' "three"}', ' four']) {
      const data = llama(content);
      const out = frames2.frame(data);
      expect(out, content).toBeDefined();
      expect(JSON.parse(out!.slice(6))).toEqual(relabelled(data));
    }
  });

  it('tells a position in the object itself from one in a string or a nested value', () => {
    const text = JSON.stringify({ a: '{"c":[1]} "e"', b: { c: 1 }, d: [{ e: 2 }], f: 3 });
    for (const [name, top] of [['"a"', true], ['"b"', true], ['"c"', false], ['"d"', true], ['"e"', false], ['"f"', true]] as const) expect(topLevel(text, text.indexOf(`${name}:`)), name).toBe(top);
  });
});

describe("the gateway's frames of plain chunks still in their bytes", () => {
  /** What frameBytesTo puts out for `piece`, as bytes (undefined: not plain). */
  const framedBytes = (frames: PlainFrames, piece: Buffer): Buffer | undefined => {
    const parts: Buffer[] = [];
    const out = { add: (text: string) => parts.push(Buffer.from(text)), addBytes: (from: Buffer, start: number, end: number) => parts.push(Buffer.from(from.subarray(start, end))) };
    return frames.frameBytesTo(piece, 0, piece.length, out) ? Buffer.concat(parts) : undefined;
  };

  it('writes the bytes frameTo writes for the chunk decoded, content counted alike: escapes, non-ASCII, bytes that are not UTF-8', () => {
    const first = JSON.parse(chunk({ role: 'assistant', content: 'Hi' })) as Body;
    const viaBytes = new PlainFrames(first, candidate, ID);
    const viaText = new PlainFrames(first, candidate, ID);
    // The pattern is learnt from a chunk framed as text (the relay's first plain one).
    const learnt = chunk({ role: 'assistant', content: 'a' });
    viaBytes.frame(learnt);
    viaText.frame(learnt);
    const plain = (content: string) => Buffer.from(chunk({ role: 'assistant', content }));
    const [before, after] = chunk({ role: 'assistant', content: 'XX' }).split('XX') as [string, string];
    const pieces = [
      ...['Garden', ' é\u00e9 🙂', ' back\\slash\nline', ' "quoted"', ''].map(plain),
      // A cut character and a byte that is never UTF-8, in the content string: decoded to U+FFFD.
      Buffer.concat([Buffer.from(before), Buffer.from([0x41, 0xe2, 0x82, 0xff, 0x42]), Buffer.from(after)]),
    ];
    for (const piece of pieces) {
      const text = piece.toString('utf8');
      const bytes = framedBytes(viaBytes, piece);
      expect(bytes, text).toBeDefined();
      expect(bytes!.toString('utf8'), text).toBe(viaText.frame(text));
      expect(bytes!.equals(Buffer.from(viaText.frame(text)!)), text).toBe(true);
      expect(viaBytes.content, text).toBe(viaText.content);
    }
    // Not the pattern (its end differs): left to the decoded path.
    expect(framedBytes(viaBytes, Buffer.from(chunk({ role: 'assistant', content: 'a' }, 'stop')))).toBeUndefined();
  });
});

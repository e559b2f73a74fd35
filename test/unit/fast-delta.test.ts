import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextDeltaReader } from '../../src/client/fast-delta.js';
import { EventSplitter, type SSEEvent } from '../../src/client/sse.js';
import { cutAt } from '../support/cut.js';

// The fast path must read exactly what a full JSON.parse of every event reads, in the same order, or decline.
const base = { id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'local/lorem', provider: 'local-alpha' };
const textChunk = (content: string) => ({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null, native_finish_reason: null, logprobs: null }] });

const otherChunk = fc.oneof(
  fc.constant({ ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, cost: 0.1 } }),
  fc.string().map((c) => ({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: c }, finish_reason: 'length', native_finish_reason: 'length', logprobs: null }] })),
  fc.string().map((c) => ({ ...base, choices: [{ index: 0, delta: { content: c, tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'f', arguments: '{"content":"no"}' } }] }, finish_reason: null }] })),
  fc.string().map((c) => ({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: c }, finish_reason: null }], router_metadata: { summary: c } })),
  fc.string().map((c) => ({ ...base, error: { code: 502, message: c }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })),
  fc.string().map((c) => ({ ...base, model: c, choices: [{ index: 0, delta: { role: 'assistant', content: c }, finish_reason: null, native_finish_reason: null, logprobs: null }] })),
);
const chunk = fc.oneof({ weight: 6, arbitrary: fc.string({ unit: 'binary' }).map(textChunk) }, { weight: 1, arbitrary: otherChunk });
/** One event as a server may frame it: a comment before it sometimes, LF or CRLF line ends, a space after `data:` or not. */
const framed = (c: object, comment: boolean, eol: string, space: boolean) => `${comment ? `: keep-alive${eol}` : ''}data:${space ? ' ' : ''}${JSON.stringify(c)}${eol}${eol}`;

type Item = { text: string } | Record<string, unknown>;
/** What EventStream does: each chunk of bytes to the splitter; events read in full are parsed and shown to the reader. */
function read(pieces: Buffer[], fast: boolean): { items: Item[]; full: number } {
  const reader = new TextDeltaReader((text) => ({ text }));
  const splitter = new EventSplitter<Item>(fast ? reader : undefined);
  const items: Item[] = [];
  let full = 0;
  const event = (ev: SSEEvent) => {
    if (ev.data === '[DONE]') return false;
    const parsed = JSON.parse(ev.data);
    full++;
    reader.learn(ev.data, parsed);
    items.push(parsed);
    return true;
  };
  for (const p of pieces) splitter.push(p, (x) => items.push(x), event);
  splitter.end(event);
  return { items, full };
}

/**
 * Items as a reader of text sees them: runs of text joined, each under the model it came from,
 * anything else as its JSON. A text item read from the bytes comes from the model of the last text
 * chunk parsed in full (the one its shape was learned from): read under another model than a full
 * parse says, it would show as another run.
 */
function asText(items: Item[]): string[] {
  const out: string[] = [];
  let run: { model: unknown; text: string } | undefined;
  let model: unknown;
  const flush = () => {
    if (run) out.push(run.model === base.model ? run.text : `${JSON.stringify(run.model)}:${run.text}`);
    run = undefined;
  };
  for (const item of items) {
    const c = item as any;
    const shapedAsText = !('text' in c) && c.choices?.length === 1 && c.choices[0].finish_reason === null && !c.usage && !c.error && !c.router_metadata && !c.choices[0].delta.tool_calls;
    if (shapedAsText) model = c.model;
    const plain = 'text' in c ? c.text : shapedAsText ? c.choices[0].delta.content : undefined;
    if (typeof plain !== 'string') {
      flush();
      out.push(JSON.stringify(c));
    } else if (run && run.model === model) run.text += plain;
    else {
      flush();
      run = { model, text: plain };
    }
  }
  flush();
  return out;
}

describe('text deltas read from the bytes', () => {
  it('reads the same events as a full parse for any stream, cut anywhere', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ c: chunk, comment: fc.boolean(), space: fc.boolean() }), { maxLength: 40 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, crlf, at) => {
          const eol = crlf ? '\r\n' : '\n';
          const bytes = Buffer.from(events.map((e) => framed(e.c, e.comment, eol, e.space)).join('') + `data: [DONE]${eol}${eol}`);
          expect(asText(read(cutAt(bytes, at), true).items)).toEqual(asText(read([bytes], false).items));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads the same cut at every single byte, or into one-byte pieces', () => {
    const stream = [textChunk('a'), textChunk('b\n"c"'), { ...textChunk('d'), usage: { total_tokens: 1 } }, textChunk('é'), textChunk('f')];
    const bytes = Buffer.from(`: hi\n\n${stream.map((c) => framed(c, false, '\n', true)).join('\n')}data: [DONE]\n\n`);
    const want = asText(read([bytes], false).items);
    for (let p = 0; p <= bytes.length; p++) expect(asText(read(cutAt(bytes, [p]), true).items)).toEqual(want);
    expect(asText(read(cutAt(bytes, Array.from(bytes.keys())), true).items)).toEqual(want);
  });

  it('parses only what it cannot read: one event in full, then runs of text', () => {
    const words = Array.from({ length: 2000 }, (_, i) => ` w${i} "q" \\ é`);
    const bytes = Buffer.from(words.map((w) => framed(textChunk(w), false, '\n', true)).join('') + 'data: [DONE]\n\n');
    const { items, full } = read(cutAt(bytes, Array.from({ length: 40 }, (_, i) => i * 997)), true);
    expect(full).toBe(1);
    expect(items.map((x: any) => x.text ?? x.choices[0].delta.content).join('')).toBe(words.join(''));
  });

  it('reads the same when one chunk of a long run differs, wherever it falls among the events checked together', () => {
    const words = Array.from({ length: 60 }, (_, i) => (i % 7 === 3 ? ` "w${i}"\n` : ` w${i}`));
    const odd = { ...textChunk('x'), choices: [{ ...textChunk('x').choices[0], finish_reason: 'length' }] };
    for (let at = 0; at <= words.length; at++) {
      const stream = words.map(textChunk) as object[];
      stream.splice(at, 0, odd);
      const bytes = Buffer.from(stream.map((c) => framed(c, false, '\n', true)).join('') + 'data: [DONE]\n\n');
      const want = asText(read([bytes], false).items);
      expect(asText(read([bytes], true).items)).toEqual(want);
      expect(asText(read(cutAt(bytes, [at * 150, at * 311 + 7]), true).items)).toEqual(want);
    }
  });

  it('never reads a chunk that differs from the learned shape by more than its text', () => {
    const first = textChunk('a');
    const stream = [first, { ...textChunk('c'), usage: { total_tokens: 1 } }, { ...first, choices: [{ ...first.choices[0], finish_reason: 'stop' }] }];
    const { items, full } = read([Buffer.from(stream.map((c) => framed(c, false, '\n', true)).join(''))], true);
    expect(full).toBe(3);
    expect(items).toEqual(stream);
  });

  it('an event larger than it holds back, and CR line ends, go to the full parse whole', () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    for (const eol of ['\n', '\r\n']) {
      const bytes = Buffer.from([textChunk('a'), textChunk(big), textChunk('b')].map((c) => framed(c, false, eol, true)).join('') + `data: [DONE]${eol}${eol}`);
      const { items } = read(cutAt(bytes, Array.from({ length: 100 }, (_, i) => i * 65536)), true);
      expect(asText(items)).toEqual([`a${big}b`]);
    }
  });
});

describe('a long learned shape', () => {
  it('reads chunks whose bytes around the text are long', () => {
    const long = { ...base, model: 'm'.repeat(3000) };
    const chunks = ['a', 'b "c"\n', 'd'].map((content) => ({ ...long, choices: [{ index: 0, delta: { content }, finish_reason: null }] }));
    const bytes = Buffer.from(chunks.map((c) => framed(c, false, '\n', true)).join('') + 'data: [DONE]\n\n');
    const { items, full } = read([bytes], true);
    expect(full).toBe(1);
    expect(items.map((x: any) => x.text ?? x.choices[0].delta.content).join('')).toBe('ab "c"\nd');
  });
});

import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MessageAssembler, type AssembledMessage } from '../../src/client/message-assembler.js';
import type { ChatChunk } from '../../src/client/types.js';

// A streamed answer, however its deltas are cut, assembles into the message the non-streamed answer gives.

/** `text` cut at the given points (sorted, deduplicated, inside the text). */
function cut(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of [...at, text.length]) {
    out.push(text.slice(from, p));
    from = p;
  }
  return out.filter((s, i) => s !== '' || i === 0);
}

const chunk = (delta: Record<string, unknown>): ChatChunk => ({ id: 'gen', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] }) as unknown as ChatChunk;

const callArb = fc.record({
  id: fc.string({ minLength: 1, maxLength: 12 }).map((s) => `call_${s}`),
  name: fc.stringMatching(/^[a-z_]{1,12}$/),
  arguments: fc.json(),
  cuts: fc.array(fc.nat(), { maxLength: 10 }),
});

const messageArb = fc.record({
  content: fc.option(fc.string({ minLength: 1 }), { nil: null }),
  contentCuts: fc.array(fc.nat(), { maxLength: 10 }),
  reasoning: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
  reasoningCuts: fc.array(fc.nat(), { maxLength: 10 }),
  calls: fc.array(callArb, { maxLength: 4 }),
  /** Which call's next fragment comes next: fragments of several calls may interleave, each call's in order. */
  order: fc.array(fc.nat(), { maxLength: 60 }),
});

describe('stream assembly (property)', () => {
  it('random fragmentations of reasoning, text and tool calls (interleaved by index) give the whole message', () => {
    fc.assert(
      fc.property(messageArb, (m) => {
        const expected: AssembledMessage = { role: 'assistant', content: m.content ?? (m.calls.length ? null : '') };
        const deltas: Record<string, unknown>[] = [];
        if (m.reasoning !== undefined) {
          expected.reasoning = m.reasoning;
          expected.reasoning_details = [{ type: 'reasoning.summary', summary: m.reasoning, index: 0 }];
          for (const piece of cut(m.reasoning, m.reasoningCuts)) deltas.push({ content: '', reasoning: piece, reasoning_details: [{ type: 'reasoning.summary', summary: piece, index: 0 }] });
        }
        if (m.content !== null) for (const piece of cut(m.content, m.contentCuts)) deltas.push({ role: 'assistant', content: piece });
        const queues = m.calls.map((c, index) => [
          { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] },
          ...cut(c.arguments, c.cuts).map((part) => ({ content: null, tool_calls: [{ index, function: { arguments: part } }] })),
        ]);
        let pick = 0;
        while (queues.some((q) => q.length)) {
          const open = queues.filter((q) => q.length);
          deltas.push(open[(m.order[pick++] ?? 0) % open.length]!.shift()!);
        }
        deltas.push({ content: '' });
        if (m.calls.length) expected.tool_calls = m.calls.map((c, index) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
        const assembler = new MessageAssembler();
        let reasoning = '';
        for (const d of deltas) reasoning += assembler.add(chunk(d));
        expect(assembler.message()).toEqual(expected);
        expect(reasoning).toBe(m.reasoning ?? '');
      }),
      { numRuns: 300 },
    );
  });
});

describe('attachment types from their bytes', () => {
  it('magic numbers win over the extension; a UTF-16 text is not MP3', async () => {
    const { sniff } = await import('../../src/cli/answers/attach.js');
    expect(sniff(Buffer.from('%PDF-1.7'))).toEqual(['file', 'application/pdf']);
    expect(sniff(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toEqual(['image', 'image/jpeg']);
    expect(sniff(Buffer.from('GIF89a'))).toEqual(['image', 'image/gif']);
    expect(sniff(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toEqual(['image', 'image/webp']);
    expect(sniff(Buffer.from([0xff, 0xfb, 0x90, 0x64]))).toEqual(['audio', 'audio/mpeg']);
    expect(sniff(Buffer.from('ID3\x04', 'latin1'))).toEqual(['audio', 'audio/mpeg']);
    expect(sniff(Buffer.from([0xff, 0xfe, 0x68, 0x00]))).toBeUndefined();
    expect(sniff(Buffer.from('plain text'))).toBeUndefined();
  });
});

describe('image dimensions from the header (local/vision)', () => {
  it('PNG, GIF, JPEG (after other segments), WebP VP8X; unreadable is undefined', async () => {
    const { encodePng, imageDimensions } = await import('../../src/emulator/models/png.js');
    expect(imageDimensions(encodePng(7, 5, () => [0, 0, 0]))).toEqual({ width: 7, height: 5 });
    const gif = Buffer.from('GIF89a\x0a\x00\x14\x00', 'latin1');
    expect(imageDimensions(gif)).toEqual({ width: 10, height: 20 });
    const app0 = Buffer.concat([Buffer.from([0xff, 0xe0, 0x00, 0x10]), Buffer.alloc(14)]);
    const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x02, 0x58, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(imageDimensions(Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]))).toEqual({ width: 600, height: 300 });
    const vp8x = Buffer.alloc(30);
    vp8x.write('RIFF', 0, 'latin1');
    vp8x.write('WEBPVP8X', 8, 'latin1');
    vp8x.writeUIntLE(799, 24, 3);
    vp8x.writeUIntLE(599, 27, 3);
    expect(imageDimensions(vp8x)).toEqual({ width: 800, height: 600 });
    expect(imageDimensions(Buffer.from('not an image'))).toBeUndefined();
  });
});

describe('json_schema answers (property)', () => {
  it('what the emulator answers validates against random schemas', async () => {
    const { answerFor } = await import('../../src/emulator/models/json-schema-answer.js');
    const { default: Ajv } = await import('ajv');
    const ajv = new (Ajv as unknown as typeof import('ajv').Ajv)({ strict: false, validateFormats: false });
    const { schema } = fc.letrec((tie) => ({
      schema: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
      leaf: fc.oneof(
        fc.record({ type: fc.constant('string'), minLength: fc.nat(5), maxLength: fc.integer({ min: 5, max: 20 }) }),
        fc.record({ type: fc.constant('integer'), minimum: fc.integer({ min: -50, max: 0 }), maximum: fc.integer({ min: 0, max: 50 }) }),
        fc.record({ type: fc.constant('number'), exclusiveMinimum: fc.constant(0), maximum: fc.constant(1) }),
        fc.constant({ type: 'boolean' }),
        fc.constant({ type: ['string', 'null'] }),
        fc.record({ enum: fc.uniqueArray(fc.oneof(fc.string(), fc.integer()), { minLength: 1, maxLength: 4 }) }),
        fc.record({ const: fc.string() }),
      ),
      array: fc.record({ type: fc.constant('array'), items: tie('schema'), minItems: fc.nat(2), maxItems: fc.constant(4) }),
      object: fc
        .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('schema'), { maxKeys: 4 })
        .map((properties) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false })),
    }));
    fc.assert(
      fc.property(schema, fc.string(), (s, prompt) => {
        const value = JSON.parse(answerFor(s as Record<string, unknown>, prompt));
        expect(ajv.validate(s as object, value), JSON.stringify(ajv.errors)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the tool loop', () => {
  it('stops after --max-tool-rounds with exit 11, the calls printed; each round ran the command once', async () => {
    const { toolLoop } = await import('../../src/cli/tools/tool-loop.js');
    const { ToolSet, commandTool } = await import('../../src/kit/index.js');
    const { testStreams } = await import('../support/inprocess.js');
    const { IO } = await import('../../src/cli/io/io.js');
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'router-loop-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const t = testStreams();
    const io = new IO({}, t.streams);
    const call = { index: 0, id: 'call_1', type: 'function' as const, function: { name: 'tick', arguments: '{}' } };
    const again = { message: { role: 'assistant' as const, content: null, tool_calls: [call] } };
    let asked = 0;
    const set = await ToolSet.open({ tools: [commandTool({ name: 'tick' }, `echo x >> ${join(dir, 'ticks')}`, { PATH: process.env.PATH ?? '' })] });
    const loop = { set, maxRounds: 3, approve: false, json: false, signal: new AbortController().signal };
    const failure = (await toolLoop(io, loop, [], again, async () => (asked++, again)).catch((e: unknown) => e)) as { exitCode: number; message: string };
    expect(failure.exitCode).toBe(11);
    expect(failure.message).toMatch(/--max-tool-rounds 3 reached/);
    expect(asked).toBe(3);
    expect(readFileSync(join(dir, 'ticks'), 'utf8')).toBe('x\nx\nx\n');
    expect(JSON.parse(t.stdout())).toEqual({ id: 'call_1', name: 'tick', arguments: {} });
  });
});

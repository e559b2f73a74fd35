import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextDeltaReader } from '../../src/client/fast-delta.js';

// The fast path must read exactly what a full JSON.parse reads, or decline.
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
const chunk = fc.oneof({ weight: 4, arbitrary: fc.string({ unit: 'binary' }).map(textChunk) }, { weight: 1, arbitrary: otherChunk });

/** What the CLI does with each chunk: the fast reading when it answers, else a full parse. */
function readAll(lines: string[]): (string | undefined)[] {
  const reader = new TextDeltaReader();
  return lines.map((line) => {
    const quick = reader.fast(line);
    if (quick !== undefined) return quick;
    const parsed = JSON.parse(line);
    reader.learn(line, parsed);
    return parsed.choices?.[0]?.delta?.content ?? undefined;
  });
}

describe('TextDeltaReader', () => {
  it('reads the same text as JSON.parse for any sequence of chunks', () => {
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 30 }), (chunks) => {
        const lines = chunks.map((c) => JSON.stringify(c));
        const slow = lines.map((l) => JSON.parse(l).choices?.[0]?.delta?.content ?? undefined);
        expect(readAll(lines)).toEqual(slow);
      }),
      { numRuns: 500 },
    );
  });

  it('never reads a chunk that differs from the learned shape by more than its text', () => {
    const reader = new TextDeltaReader();
    const first = JSON.stringify(textChunk('a'));
    reader.learn(first, JSON.parse(first));
    expect(reader.fast(JSON.stringify(textChunk('b "quoted" \\ \u00e9')))).toBe('b "quoted" \\ \u00e9');
    expect(reader.fast(JSON.stringify({ ...textChunk('c'), usage: { total_tokens: 1 } }))).toBeUndefined();
    expect(reader.fast(JSON.stringify({ ...textChunk('d'), choices: [{ ...textChunk('d').choices[0], finish_reason: 'stop' }] }))).toBeUndefined();
  });
});

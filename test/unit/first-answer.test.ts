import { describe, expect, it } from 'vitest';
import { carriesAnswer } from '../../src/emulator/providers/first-answer.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => JSON.stringify({ id: 'g', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });

describe('the first event of an answer (first_event_timeout_ms)', () => {
  it('is not a role-only chunk, an empty content, a chunk with no choices, or a Responses stream opening', () => {
    expect(carriesAnswer(chunk({ role: 'assistant' }))).toBe(false);
    expect(carriesAnswer(chunk({ role: 'assistant', content: '', refusal: null }))).toBe(false);
    expect(carriesAnswer(JSON.stringify({ id: 'g', choices: [], prompt_filter_results: [] }))).toBe(false);
    expect(carriesAnswer(JSON.stringify({ type: 'response.created', response: { status: 'in_progress' } }), true)).toBe(false);
    expect(carriesAnswer(JSON.stringify({ type: 'response.output_item.added', item: { type: 'message', content: [] } }), true)).toBe(false);
    expect(carriesAnswer(JSON.stringify({ type: 'keepalive' }), true)).toBe(false);
    // A chat chunk with a `type` of its own is chat, and a ping is no answer.
    expect(carriesAnswer(chunk({ role: 'assistant' }, null, { type: 'chat.completion.chunk' }))).toBe(false);
    expect(carriesAnswer(JSON.stringify({ type: 'ping' }))).toBe(false);
    // In a chat stream, whatever its `type` says: before, `error` and `response.*` types counted as Responses output.
    expect(carriesAnswer(JSON.stringify({ type: 'error', message: 'overloaded' }))).toBe(false);
    expect(carriesAnswer(JSON.stringify({ type: 'response.output_text.delta', delta: 'hi' }))).toBe(false);
  });

  it('is content, reasoning, a tool call, a finish reason, usage, an error, output, or what is not JSON', () => {
    expect(carriesAnswer(chunk({ content: 'hi' }))).toBe(true);
    expect(carriesAnswer(chunk({ reasoning: 'hmm' }))).toBe(true);
    expect(carriesAnswer(chunk({ reasoning_content: 'hmm' }))).toBe(true);
    expect(carriesAnswer(chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] }))).toBe(true);
    expect(carriesAnswer(chunk({}, 'stop'))).toBe(true);
    expect(carriesAnswer(JSON.stringify({ id: 'g', choices: [], usage: { prompt_tokens: 1 } }))).toBe(true);
    expect(carriesAnswer(JSON.stringify({ error: { message: 'overloaded' } }))).toBe(true);
    expect(carriesAnswer(JSON.stringify({ type: 'response.output_text.delta', delta: 'hi' }), true)).toBe(true);
    expect(carriesAnswer(JSON.stringify({ type: 'response.output_item.added', item: { type: 'function_call', name: 'f' } }), true)).toBe(true);
    expect(carriesAnswer(JSON.stringify({ type: 'error', code: 'server_error', message: 'overloaded' }), true)).toBe(true);
    expect(carriesAnswer('[DONE]')).toBe(true);
    expect(carriesAnswer('not json')).toBe(true);
  });
});

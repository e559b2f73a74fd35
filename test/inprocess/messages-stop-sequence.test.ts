import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicPerTarget } from '../support/anthropic-target.js';
import { runBatch } from '../support/emulator-folder.js';
import { TARGETS, type Target } from '../support/client-targets.js';

// `POST /v1/messages` with stop sequences, through the official `@anthropic-ai/sdk`: a sequence that ends the
// answer is named (`stop_reason: "stop_sequence"`, `stop_sequence`) in the whole answer, in the stream's
// message_delta and in a `/v1/messages` batch's results, and message_start counts the input as Anthropic's does.
// Before: `end_turn` and `null` everywhere, and message_start said `input_tokens: 0`.
type Event = Anthropic.MessageStreamEvent;

describe.each(TARGETS)('/v1/messages stop sequences and message_start usage (%s)', (kind) => {
  let t!: Target;
  let client!: Anthropic;
  anthropicPerTarget(kind, (target, c) => ((t = target), (client = c)));
  const ask = (content: string, stop_sequences: string[], max_tokens = 64) => ({ model: t.model('echo'), max_tokens, stop_sequences, messages: [{ role: 'user' as const, content }] });
  // The gateway's upstream here is another router serve, whose chat answer says only `finish_reason: "stop"`:
  // which sequence ended it is not knowable there (docs/gateway.md), so the turn ended as far as anyone knows.
  const told = (sequence: string) => (kind === 'gateway' ? { stop_reason: 'end_turn', stop_sequence: null } : { stop_reason: 'stop_sequence', stop_sequence: sequence });

  it('messages.create: the sequence that ended the answer, the one completed first of several', async () => {
    const m = await client.messages.create(ask('one two STOP three', ['NEVER', 'STOP']));
    expect(m.content).toEqual([{ type: 'text', text: 'one two ', citations: null }]);
    expect({ stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }).toEqual(told('STOP'));
    // "four" starts first, but a model writing left to right completes "ee f" first.
    const first = await client.messages.create(ask('one three four', ['four', 'ee f']));
    expect([(first.content[0] as Anthropic.TextBlock).text, first.stop_sequence]).toEqual(['one thr', told('ee f').stop_sequence]);
    // A sequence never met, and one the max_tokens cut comes before, end otherwise.
    expect((await client.messages.create(ask('one two', ['zz']))).stop_reason).toBe('end_turn');
    const cut = await client.messages.create(ask('one two three four STOP', ['STOP'], 2));
    expect([cut.stop_reason, cut.stop_sequence]).toEqual(['max_tokens', null]);
  });

  it('messages.stream(): message_start counts the input, message_delta names the sequence, finalMessage too', async () => {
    const stream = client.messages.stream(ask('one two STOP three', ['STOP']));
    const events: Event[] = [];
    // Each event as it came: the SDK's message grows from message_start's own object.
    stream.on('streamEvent', (e) => events.push(structuredClone(e)));
    const m = await stream.finalMessage();
    expect({ stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }).toEqual(told('STOP'));
    const start = events.find((e): e is Anthropic.MessageStartEvent => e.type === 'message_start')!;
    expect(start.message.usage.input_tokens).toBeGreaterThan(0);
    expect(start.message.usage.input_tokens).toBe(m.usage.input_tokens);
    expect(start.message.usage.output_tokens).toBe(0);
    const delta = events.find((e): e is Anthropic.MessageDeltaEvent => e.type === 'message_delta')!;
    expect(delta.delta).toMatchObject(told('STOP'));
    const whole = await client.messages.create(ask('one two STOP three', ['STOP']));
    expect([m.content, m.usage.input_tokens, m.usage.output_tokens]).toEqual([whole.content, whole.usage.input_tokens, whole.usage.output_tokens]);
  });

  it('chat itself says only finish_reason "stop" (native "stop"), as the spec has it', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: t.model('echo'), stop: ['STOP'], messages: [{ role: 'user', content: 'one two STOP three' }] }) });
    const choice = ((await res.json()) as { choices: Record<string, unknown>[] }).choices[0]!;
    expect([choice.message, choice.finish_reason, choice.native_finish_reason]).toEqual([expect.objectContaining({ content: 'one two ' }), 'stop', 'stop']);
    expect(Object.keys(choice)).not.toContain('stop_reason');
  });

  it('a /v1/messages batch: each result says which sequence ended it', async () => {
    const lines = [ask('one STOP two', ['STOP']), ask('three END four', ['STOP', 'END']), ask('five six', ['STOP'])].map(({ model: _m, ...body }) => body);
    const seen = await runBatch(t.emulator, kind === 'deployed' ? 'deployed' : 'spec', '/v1/messages', t.model('echo'), lines);
    const bodies = [...seen.results].sort((a: any, b: any) => a.custom_id.localeCompare(b.custom_id)).map((r: any) => r.response.body);
    expect(bodies.map((b: any) => ({ stop_reason: b.stop_reason, stop_sequence: b.stop_sequence }))).toEqual([told('STOP'), told('END'), { stop_reason: 'end_turn', stop_sequence: null }]);
    expect(bodies.map((b: any) => b.content[0].text)).toEqual(['one ', 'three ', 'five six']);
  });
});

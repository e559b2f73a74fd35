import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicPerTarget } from '../support/anthropic-target.js';
import { TARGETS, type Target } from '../support/client-targets.js';

// `POST /v1/messages` held to the OpenAPI's MessagesRequest (model and messages required, max_tokens not) and
// its refusals naming the fields the client sent, over the official SDK on every target.
describe.each(TARGETS)('/v1/messages request rules (%s)', (kind) => {
  let t!: Target;
  let client!: Anthropic;
  anthropicPerTarget(kind, (target, c) => ((t = target), (client = c)));
  const refusal = async (ask: object) => {
    const e = await client.messages.create(ask as Anthropic.MessageCreateParamsNonStreaming).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Anthropic.BadRequestError);
    return (e as InstanceType<typeof Anthropic.APIError>).error as { type: string; error: { type: string; message: string } };
  };

  it('max_tokens left out is answered (the OpenAPI does not require it); 0 or 1.5 is a 400 naming it', async () => {
    const m = await client.messages.create({ model: t.model('echo'), messages: [{ role: 'user', content: 'no limit' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect([m.stop_reason, m.content]).toEqual(['end_turn', [{ type: 'text', text: 'no limit', citations: null }]]);
    for (const max of [0, 1.5, '10']) expect((await refusal({ model: t.model('echo'), max_tokens: max, messages: [{ role: 'user', content: 'hi' }] })).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('max_tokens') });
  });

  it('a model left out is a 400 naming model, not an answer from a default model', async () => {
    const e = await refusal({ max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(e).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('model') } });
  });

  it('stop_sequences refused in their own name: 5 of them, or a string', async () => {
    const five = await refusal({ model: t.model('echo'), max_tokens: 16, stop_sequences: ['a', 'b', 'c', 'd', 'e'], messages: [{ role: 'user', content: 'hi' }] });
    expect(five.error.message).toContain('stop_sequences');
    const str = await refusal({ model: t.model('echo'), max_tokens: 16, stop_sequences: 'zz', messages: [{ role: 'user', content: 'hi' }] });
    expect(str.error.message).toContain('stop_sequences');
  });

  it('a tool_result whose tool_use_id answers no earlier tool_use is a 400 naming the id (as Anthropic answers)', async () => {
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_known', name: 'look', input: {} }] };
    const stray = await refusal({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'look' }, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_stray', content: 'x' }] }] });
    expect(stray).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('toolu_stray') } });
    const first = await refusal({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_none', content: 'x' }] }] });
    expect(first.error.message).toContain('toolu_none');
    const m = await client.messages.create({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'look' }, use as Anthropic.MessageParam, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_known', content: 'seen' }, { type: 'text', text: 'and?' }] }] });
    expect(m.stop_reason).toBe('end_turn');
  });
});

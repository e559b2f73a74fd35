import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicPerTarget } from '../support/anthropic-target.js';
import { TARGETS, type Target } from '../support/client-targets.js';

// @anthropic-ai/sdk's toolRunner() asks for a server-held message thread (`thread: {type: "create"}`, then
// only the new messages with `previous_message_id`). The OpenAPI's MessagesRequest has no `thread`: the
// service keeps nothing: the 400 of the second turn says so, and with `thread: false` the whole history goes each turn.
describe.each(TARGETS)('@anthropic-ai/sdk toolRunner() against router serve (%s)', (kind) => {
  let t!: Target;
  let client!: Anthropic;
  anthropicPerTarget(kind, (target, c) => ((t = target), (client = c)));

  const weather = (cities: string[]) => ({ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }, run: (input: { city: string }) => (cities.push(input.city), `21C in ${input.city}`) });

  it('threaded (the default): the second turn is a 400 in the SDK\'s class that says to send the whole conversation', async () => {
    const cities: string[] = [];
    const run = client.beta.messages.toolRunner({ model: t.model('tools'), max_tokens: 300, messages: [{ role: 'user', content: 'weather in Paris' }], tools: [weather(cities)] });
    const err: unknown = await Promise.resolve(run).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toMatch(/keeps no message threads: send the whole conversation, as toolRunner\(\{thread: false\}\) does/);
    expect(cities).toHaveLength(1);
  });

  it('runs the tool the model calls and ends with the answer from its result', async () => {
    const cities: string[] = [];
    const final = await client.beta.messages.toolRunner({
      thread: false,
      model: t.model('tools'),
      max_tokens: 300,
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [weather(cities)],
    });
    expect(cities).toHaveLength(1);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining(`21C in ${cities[0]}`) })]);
  });
});

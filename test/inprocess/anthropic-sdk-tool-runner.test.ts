import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, TARGETS, type Target } from '../support/client-targets.js';

// @anthropic-ai/sdk's toolRunner() asks for a server-held message thread (`thread: {type: "create"}`, then
// only the new messages with `previous_message_id`). The OpenAPI's MessagesRequest has no `thread`: the
// service keeps nothing, so the runner is told `thread: false` and sends the whole history each turn.
describe.each(TARGETS)('@anthropic-ai/sdk toolRunner({thread: false}) against router serve (%s)', (kind) => {
  let t: Target;
  let client: Anthropic;
  beforeAll(async () => {
    t = await startTarget(kind);
    client = new Anthropic({ apiKey: t.apiKey, baseURL: t.baseURL.replace(/\/v1$/, ''), maxRetries: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('runs the tool the model calls and ends with the answer from its result', async () => {
    const cities: string[] = [];
    const final = await client.beta.messages.toolRunner({
      thread: false,
      model: t.model('tools'),
      max_tokens: 300,
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, run: (input: { city: string }) => (cities.push(input.city), `21C in ${input.city}`) }],
    });
    expect(cities).toHaveLength(1);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining(`21C in ${cities[0]}`) })]);
  });
});

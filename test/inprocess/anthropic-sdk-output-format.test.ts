import Anthropic from '@anthropic-ai/sdk';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { describe, expect, it } from 'vitest';
import { anthropicPerTarget } from '../support/anthropic-target.js';
import { z } from 'zod';
import { TARGETS, type Target } from '../support/client-targets.js';

// The OpenAPI's MessagesRequest has `output_config.format` (structured outputs): the @anthropic-ai/sdk's
// messages.parse() sends it and parses the text block as JSON. It was dropped, and the text was the prompt.
const person = z.object({ name: z.string(), age: z.number() });

describe.each(TARGETS)('@anthropic-ai/sdk structured outputs against router serve (%s)', (kind) => {
  let t!: Target;
  let client!: Anthropic;
  anthropicPerTarget(kind, (target, c) => ((t = target), (client = c)));
  const ask = () => ({ model: t.model('echo'), max_tokens: 200, messages: [{ role: 'user' as const, content: 'a person' }], output_config: { format: zodOutputFormat(person) } });

  it('messages.parse(): the answer holds to the schema, parsed_output typed', async () => {
    const m = await client.messages.parse(ask());
    expect(person.parse(m.parsed_output)).toEqual(m.parsed_output);
    expect(m.stop_reason).toBe('end_turn');
  });

  it('messages.stream() with output_config: the final message parses too', async () => {
    const m = await client.messages.stream(ask()).finalMessage();
    expect(person.parse(m.parsed_output)).toEqual(m.parsed_output);
  });

  it('a format that is not a json_schema one is a 400 in the SDK\'s own class', async () => {
    const bad = client.messages.create({ model: t.model('echo'), max_tokens: 20, messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'xml' } as never } });
    await expect(bad).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(bad).rejects.toThrow(/output_config\.format/);
  });
});

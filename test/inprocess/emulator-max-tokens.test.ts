import { describe, expect, it } from 'vitest';
import { encodePng } from '../../src/emulator/models/png.js';
import { post, startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// Every model stops at the max tokens asked, whatever the shape of its answer: what --max-cost and
// the budgets bound is never overspent.
const t = startedForAll(() => startCliEnv());

const user = (content: string) => [{ role: 'user', content }];
const PNG = encodePng(4, 4, () => [200, 30, 30]).toString('base64');
const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const schema = { type: 'json_schema', json_schema: { name: 'city', strict: true, schema: { type: 'object', properties: { name: { type: 'string' }, sights: { type: 'array', items: { type: 'string' } } }, required: ['name', 'sights'] } } };
const answers: [string, Record<string, unknown>][] = [
  ['reasoning (local/thinker)', { model: 'local/thinker', messages: user('why is the sky blue') }],
  ['an image (local/painter)', { model: 'local/painter', modalities: ['text', 'image'], messages: user('a red fox') }],
  ['tool calls (local/tools)', { model: 'local/tools', tools, messages: user('weather in Paris and in Rome') }],
  ['a schema answer', { model: 'local/lorem', response_format: schema, messages: user('a city') }],
  ['citations (the web plugin)', { model: 'local/lorem', plugins: [{ id: 'web' }], messages: user('write 40 words') }],
  ['an image described (local/vision)', { model: 'local/vision', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }] }],
];

describe('max tokens in chat', () => {
  it.each(answers)('%s: the whole answer when it fits, with its reasoning and image tokens said', async (_, body) => {
    const r = await post(t, '/v1/chat/completions', body);
    expect(r.status).toBe(200);
    expect(r.json.choices[0].finish_reason).not.toBe('length');
    const { reasoning_tokens, image_tokens } = r.json.usage.completion_tokens_details;
    expect(reasoning_tokens > 0).toBe(body.model === 'local/thinker');
    expect(image_tokens).toBe(body.model === 'local/painter' ? 1000 : 0);
    expect(r.json.usage.completion_tokens).toBeGreaterThan(5);
  });

  it.each(answers)('%s: cut at max_tokens 5, finish_reason "length", billed for 5 at most', async (_, body) => {
    for (const stream of [false, true]) {
      const r = await post(t, '/v1/chat/completions', { ...body, max_tokens: 5, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
      expect(r.status).toBe(200);
      const chunks = stream ? r.text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))) : [r.json];
      const usage = chunks.at(-1).usage;
      const finish = chunks.flatMap((c) => c.choices.map((ch: { finish_reason: string | null }) => ch.finish_reason)).filter(Boolean);
      expect(finish, r.text).toEqual(['length']);
      expect(usage.completion_tokens).toBeLessThanOrEqual(5);
      const price = { 'local/thinker': 4e-6, 'local/painter': 3e-5, 'local/tools': 2e-6, 'local/lorem': 1.5e-6, 'local/vision': 2e-6 }[body.model as string]!;
      expect(usage.cost).toBeLessThanOrEqual(usage.prompt_tokens * 1e-5 + 5 * price);
      if (!stream) expect(r.json.choices[0].message.images).toBeUndefined();
      if (!stream) expect(r.json.choices[0].message.tool_calls).toBeUndefined();
    }
  });
});

describe('max output tokens in Responses', () => {
  it.each([
    ['reasoning', { model: 'local/thinker', input: 'why is the sky blue' }],
    ['an image', { model: 'local/painter', modalities: ['text', 'image'], input: 'a red fox' }],
    ['function calls', { model: 'local/tools', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters }], input: 'weather in Paris' }],
  ])('%s: incomplete at max_output_tokens 5, billed for 5 at most', async (_, body) => {
    const whole = await post(t, '/v1/responses', body);
    expect(whole.json.status).toBe('completed');
    expect(whole.json.usage.output_tokens).toBeGreaterThan(5);
    const r = await post(t, '/v1/responses', { ...body, max_output_tokens: 5 });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(r.json.usage.output_tokens).toBeLessThanOrEqual(5);
    expect(r.json.output.map((o: { type: string }) => o.type)).not.toContain('image_generation_call');
    expect(r.json.output.map((o: { type: string }) => o.type)).not.toContain('function_call');
  });
});

describe('log probabilities', () => {
  it("the chosen token is the first of its top_logprobs, with its own logprob; the others are less likely", async () => {
    const r = await post(t, '/v1/chat/completions', { model: 'local/lorem', logprobs: true, top_logprobs: 3, messages: user('write 20 words') });
    const tokens = r.json.choices[0].logprobs.content as { token: string; logprob: number; top_logprobs: { token: string; logprob: number }[] }[];
    expect(tokens.length).toBeGreaterThan(10);
    for (const tk of tokens) {
      expect(tk.top_logprobs[0]).toMatchObject({ token: tk.token, logprob: tk.logprob });
      for (const other of tk.top_logprobs.slice(1)) expect(other.logprob).toBeLessThan(tk.logprob);
    }
  });
});

/**
 * What a program that speaks the service through the official SDKs does beyond one answer: function tools
 * (a call, its result sent back, streamed calls joined by the SDK's own helpers) and the SDK's typed errors for
 * 401, 402 and 429, streamed or not. Each must be read as the SDK reads the service's.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import type { TestEnv } from '../helpers.js';
import { attemptRow, type Row } from './checks.js';

type RowMaker = (operation: string, check: string) => Row;

const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const weather = [{ type: 'function' as const, function: { name: 'get_weather', description: 'the weather of a city', parameters } }];
const ask = [{ role: 'user' as const, content: 'weather in Paris' }];
// local/tools answers a tool result with text naming it.
const answered = (text: string | null | undefined) => typeof text === 'string' && text.includes('{"temp":21}');

function must(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

export async function sdkToolChecks(t: TestEnv, row: RowMaker): Promise<void> {
  const baseURL = `${t.apiRoot}/v1`;
  const openai = new OpenAI({ apiKey: t.apiKey, baseURL, maxRetries: 0 });
  const attempt = (check: string, fn: () => Promise<void>) => attemptRow(row('tools', check), fn);

  await attempt('openai npm: a call, then its result sent back', async () => {
    const first = await openai.chat.completions.create({ model: 'local/tools', messages: ask, tools: weather });
    const calls = first.choices[0]!.message.tool_calls ?? [];
    must(first.choices[0]!.finish_reason === 'tool_calls' && calls.length === 1, `answered ${JSON.stringify(first.choices[0])}`);
    const results = calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '{"temp":21}' }));
    const second = await openai.chat.completions.create({ model: 'local/tools', messages: [...ask, first.choices[0]!.message, ...results], tools: weather });
    must(answered(second.choices[0]!.message.content), `after the result: ${JSON.stringify(second.choices[0]!.message.content)}`);
  });
  await attempt('openai npm: streamed calls joined by finalChatCompletion()', async () => {
    const final = await openai.chat.completions.stream({ model: 'local/tools', messages: ask, tools: weather }).finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls?.[0];
    must(call?.type === 'function' && typeof JSON.parse(call.function.arguments).city === 'string', `joined ${JSON.stringify(call)}`);
  });
  const fn = { name: 'get_weather', description: 'the weather of a city', parameters, function: () => ({ temp: 21 }), parse: JSON.parse };
  await attempt('openai npm: runTools() runs the function', async () => {
    must(answered(await openai.chat.completions.runTools({ model: 'local/tools', messages: ask, tools: [{ type: 'function', function: fn }] }).finalContent()), 'no answer from the tool result');
  });
  await attempt('openai npm: runTools() runs the function, streamed', async () => {
    const runner = openai.chat.completions.runTools({ model: 'local/tools', messages: ask, tools: [{ type: 'function', function: fn }], stream: true });
    must(answered(await runner.finalContent()), 'no answer from the tool result');
  });

  const { OpenRouter } = await import('@openrouter/sdk');
  const { tool } = await import('@openrouter/sdk/lib/tool.js');
  const sdk = new OpenRouter({ apiKey: t.apiKey, serverURL: baseURL });
  await attempt('official SDK: streamed call fragments', async () => {
    type Chunk = { choices: { delta: { toolCalls?: { function?: { arguments?: string } }[] }; finishReason?: string | null }[] };
    const s = (await sdk.chat.send({ chatRequest: { model: 'local/tools', messages: ask, tools: weather, stream: true } })) as unknown as AsyncIterable<Chunk>;
    let args = '';
    let finish: string | null | undefined;
    for await (const c of s) {
      for (const d of c.choices[0]?.delta.toolCalls ?? []) args += d.function?.arguments ?? '';
      finish = c.choices[0]?.finishReason ?? finish;
    }
    must(finish === 'tool_calls' && typeof JSON.parse(args).city === 'string', `fragments joined to ${JSON.stringify(args)}, finish ${finish}`);
  });
  await attempt('official SDK: callModel() runs a tool (Responses)', async () => {
    const getWeather = tool({ name: 'get_weather', inputSchema: z.object({ city: z.string() }), execute: () => ({ temp: 21 }) });
    must(answered(await sdk.callModel({ model: 'local/tools', input: 'weather in Paris', tools: [getWeather] }).getText()), 'no answer from the tool result');
  });

  await sdkErrorChecks(t, row);
}

/** The SDK's error classes are chosen by status and their `error` read with zod: the body must be the service's. */
async function sdkErrorChecks(t: TestEnv, row: RowMaker): Promise<void> {
  const { OpenRouter } = await import('@openrouter/sdk');
  const errors = await import('@openrouter/sdk/models/errors');
  const serverURL = `${t.apiRoot}/v1`;
  const client = (apiKey: string) => new OpenRouter({ apiKey, serverURL, retryConfig: { strategy: 'none' } });
  const poor = await t.admin('workspaces', { credits: 0 });
  const keys = { 401: 'sk-wrong', 402: poor.api_key, 429: t.apiKey };
  const classes = { 401: errors.UnauthorizedResponseError, 402: errors.PaymentRequiredResponseError, 429: errors.TooManyRequestsResponseError };
  const user = [{ role: 'user' as const, content: 'x' }];
  for (const status of [401, 402, 429] as const) {
    const sdk = client(keys[status]);
    const options = status === 429 ? { headers: { 'x-router-fault': '429,retry_after=1' } } : {};
    const calls: [string, () => Promise<unknown>][] = [
      ['chat', () => sdk.chat.send({ chatRequest: { model: 'local/echo', messages: user } }, options)],
      ['chat streamed', async () => {
        const s = await sdk.chat.send({ chatRequest: { model: 'local/echo', messages: user, stream: true } }, options);
        for await (const c of s as unknown as AsyncIterable<unknown>) void c;
      }],
      ['embeddings', () => sdk.embeddings.generate({ requestBody: { model: 'local/embed', input: 'x' } }, options)],
      ['responses', () => sdk.beta.responses.send({ responsesRequest: { model: 'local/echo', input: 'x' } }, options)],
    ];
    for (const [what, call] of calls) {
      await attemptRow(row('errors', `official SDK: ${status} of ${what} is ${classes[status].name}`), async () => {
        const err: unknown = await call().then(() => undefined, (e: unknown) => e);
        must(err instanceof classes[status], `got ${(err as Error)?.constructor?.name}: ${String((err as Error)?.message)}`);
        const e = err as InstanceType<(typeof classes)[typeof status]>;
        must(e.statusCode === status && e.error.code === status && e.error.message.length > 0, `read ${JSON.stringify(e.error)}`);
      });
    }
  }
}

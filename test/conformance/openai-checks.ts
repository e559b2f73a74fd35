/**
 * The `openai` npm package, pointed at the emulator with a changed base URL, as most programs
 * that talk to the service (and to `router serve` in their tests) do.
 */
import OpenAI from 'openai';
import type { TestEnv } from '../helpers.js';
import { attemptRow, type Row } from './checks.js';

type RowMaker = (operation: string, check: string) => Row;

export async function openaiChecks(t: TestEnv, row: RowMaker): Promise<void> {
  const baseURL = `${t.apiRoot}/v1`;
  const client = new OpenAI({ apiKey: t.apiKey, baseURL, maxRetries: 0 });
  const management = new OpenAI({ apiKey: t.managementKey, baseURL, maxRetries: 0 });
  const attempt = (operation: string, check: string, fn: () => Promise<void>) => attemptRow(row(operation, `openai npm: ${check}`), fn);
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new Error(what);
  };
  const user = (content: string) => [{ role: 'user' as const, content }];

  await attempt('chat completions', 'create', async () => {
    const c = await client.chat.completions.create({ model: 'local/echo', messages: user('hello there') });
    expect(c.choices[0]?.message.content === 'hello there', `echo answered ${JSON.stringify(c.choices[0]?.message.content)}`);
    expect(c.usage!.total_tokens === c.usage!.prompt_tokens + c.usage!.completion_tokens, 'usage does not add up');
  });
  await attempt('chat completions', 'stream with usage', async () => {
    const stream = await client.chat.completions.create({ model: 'local/lorem', messages: user('write 7 words'), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.trim().split(/\s+/).length === 7, `streamed ${JSON.stringify(text)}`);
    expect(!!usage && usage.completion_tokens > 0, 'no usage chunk');
  });
  await attempt('chat completions', 'stream helper finalChatCompletion()', async () => {
    const runner = client.chat.completions.stream({ model: 'local/echo', messages: user('a b c') });
    let deltas = '';
    runner.on('content', (delta) => (deltas += delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content === 'a b c', `final ${JSON.stringify(final.choices[0]?.message.content)}`);
    expect(deltas === 'a b c', `deltas ${JSON.stringify(deltas)}`);
  });

  await attempt('embeddings', 'float', async () => {
    const e = await client.embeddings.create({ model: 'local/embed', input: ['one', 'two'], dimensions: 6, encoding_format: 'float' });
    expect(e.data.length === 2 && e.data.every((d) => d.embedding.length === 6 && typeof d.embedding[0] === 'number'), 'wrong vectors');
  });
  await attempt('embeddings', 'default (base64, decoded by the client)', async () => {
    const viaBase64 = await client.embeddings.create({ model: 'local/embed', input: 'same text', dimensions: 5 });
    const viaFloat = await client.embeddings.create({ model: 'local/embed', input: 'same text', dimensions: 5, encoding_format: 'float' });
    const a = viaBase64.data[0]!.embedding;
    const b = viaFloat.data[0]!.embedding;
    expect(a.length === 5 && a.every((x, i) => Math.abs(x - b[i]!) < 1e-6), `base64 ${JSON.stringify(a)} vs float ${JSON.stringify(b)}`);
  });

  await attempt('responses', 'create', async () => {
    const r = await client.responses.create({ model: 'local/echo', input: 'hi you' });
    expect(r.status === 'completed' && r.output_text === 'hi you', `output_text ${JSON.stringify(r.output_text)}`);
  });
  await attempt('responses', 'stream helper finalResponse()', async () => {
    const stream = client.responses.stream({ model: 'local/echo', input: 'x y z' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text === 'x y z' && deltas === 'x y z', `final ${JSON.stringify(final.output_text)}, deltas ${JSON.stringify(deltas)}`);
  });

  for (const format of ['mp3', 'pcm'] as const) {
    await attempt('speech', format, async () => {
      const res = await management.audio.speech.create({ model: 'local/tts', voice: 'alloy', input: 'hello there', response_format: format });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const type = res.headers.get('content-type');
      if (format === 'mp3') expect(type === 'audio/mpeg' && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0, `not MP3 frames (${type})`);
      else expect(type === 'audio/pcm' && bytes.length > 1000 && bytes.length % 2 === 0, `not 16-bit PCM (${type}, ${bytes.length} bytes)`);
    });
  }

  const poor = await t.admin('workspaces', { credits: 0 });
  const broke = new OpenAI({ apiKey: poor.api_key, baseURL, maxRetries: 0 });
  type APIError = InstanceType<typeof OpenAI.APIError>;
  const errorCases: [number, abstract new (...args: never[]) => APIError, () => Promise<unknown>][] = [
    [400, OpenAI.BadRequestError, () => client.chat.completions.create({ model: 'local/echo', messages: [] })],
    [401, OpenAI.AuthenticationError, () => new OpenAI({ apiKey: 'sk-wrong', baseURL, maxRetries: 0 }).embeddings.create({ model: 'local/embed', input: 'x' })],
    [402, OpenAI.APIError, () => broke.chat.completions.create({ model: 'local/echo', messages: user('x') })],
    [403, OpenAI.PermissionDeniedError, () => client.audio.speech.create({ model: 'local/tts', voice: 'alloy', input: 'x' })],
    [429, OpenAI.RateLimitError, () => client.chat.completions.create({ model: 'local/echo', messages: user('x') }, { headers: { 'x-router-fault': '429,retry_after=1' } })],
  ];
  for (const [status, errorClass, call] of errorCases) {
    await attempt('errors', `${status} is ${errorClass.name}`, async () => {
      const err = await call().then(() => undefined, (e: unknown) => e);
      expect(err instanceof errorClass && (err as APIError).status === status, `got ${String(err)}`);
      expect(typeof (err as APIError).message === 'string' && (err as APIError).message.length > 0, 'no message');
    });
  }

  const retrying = new OpenAI({ apiKey: t.apiKey, baseURL, maxRetries: 2 });
  for (const fault of ['429,retry_after=1,times=1', '503,times=2']) {
    await attempt('retries', `client retries an injected ${fault.split(',')[0]} (${fault})`, async () => {
      t.clearRequests();
      const c = await retrying.chat.completions.create({ model: 'local/echo', messages: user('again') }, { headers: { 'x-router-fault': fault } });
      const sent = t.requests().filter((q) => q.path === '/v1/chat/completions').length;
      const times = Number(/times=(\d+)/.exec(fault)![1]);
      expect(c.choices[0]?.message.content === 'again', 'no answer after retries');
      expect(sent === times + 1, `${sent} requests reached the emulator, expected ${times + 1}`);
    });
  }
}

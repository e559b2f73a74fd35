import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { endUser } from '../../src/emulator/routing/end-user.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// Providers that answer what is not an answer: JSON that is no chat completion, stream events that
// are not objects, refusals in other servers' words, bodies without end. Each is passed over (or, past
// the first token, ends the stream with the error chunk) in words that name it; never a 500. The good
// upstream is another emulator, spoken to only over HTTP.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
const locals: LocalUpstream[] = [];
const bodies: Record<string, unknown>[] = [];

const json = (text: string, status = 200) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
};
const sse = (...events: string[]) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(events.join(''));
};
/** Sends `mib` MiB of one JSON string (or one event), then ends it. */
const endless = (mib: number, stream: boolean) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
  res.write(stream ? 'data: {"choices":[{"delta":{"content":"' : '{"choices":[{"message":{"content":"');
  const piece = 'a'.repeat(64 * 1024);
  let sent = 0;
  const more = () => {
    while (sent < mib * 16) {
      sent++;
      if (res.destroyed) return;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end(stream ? '"}}]}\n\ndata: [DONE]\n\n' : '"}}]}');
  };
  more();
};

const limited = (wait: string) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': wait });
  res.end('{"error":{"code":429,"message":"slow down"}}');
};

/** An array longer than the 80 characters an error quotes of it. */
const WIDE = `[${'1234567,'.repeat(15)}0]`;
const ANSWERS = {
  'rate-7': limited('7'),
  'rate-3': limited('3'),
  five: json('{"error":{"code":503,"message":"down"}}', 503),
  empty: json('{}'),
  array: json('[1,2]'),
  null: json('null'),
  html: json('<html>busy</html>'),
  'no-data': json('{"object":"list"}'),
  wide: json(WIDE),
  'stream-null': sse('data: null\n\n', sseChunk('x'), 'data: [DONE]\n\n'),
  'stream-number': sse('data: 42\n\n', 'data: [DONE]\n\n'),
  'late-null': sse(sseChunk(null), sseChunk('first '), 'data: null\n\n', sseChunk('more'), 'data: [DONE]\n\n'),
  vllm: json('{"object":"error","message":"max_tokens is too large: 99999","type":"BadRequestError","code":400}', 400),
  ollama: json('{"error":"model \\"llama9\\" not found, try pulling it first"}', 400),
  huge: endless(3, false),
  'huge-event': endless(3, true),
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-garbage-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const entries: string[] = [];
  for (const [name, answer] of Object.entries(ANSWERS)) {
    const l = await localUpstream((req, res, body) => {
      bodies.push(body);
      answer(req, res);
    });
    locals.push(l);
    const kind = name === 'no-data' ? 'embedding_models' : 'models';
    entries.push(`  - { name: "${name}", base_url: "${l.baseUrl}", max_answer_mb: 1, responses: ${name === 'empty'}, ${kind}: { test/${name}: x, test/${kind === 'models' ? 'chat' : 'embed'}: x } }`);
  }
  const up = `  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/chat: local/echo }, embedding_models: { test/embed: local/embed } }`;
  const config = parseProviders(`providers:\n${entries.join('\n')}\n${up}\n`, { UP_KEY: upstream.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const l of locals) await l.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};
const chat = (model: string, extra: Record<string, unknown> = {}) => post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello there' }], ...extra });
const errorOf = (text: string) => (JSON.parse(text) as { error: { message: string } }).error.message;

describe('whole answers that are no answer', () => {
  it.each([
    ['empty', 'an answer without choices: {}'],
    ['array', 'an answer that is not a JSON object: [1,2]'],
    ['null', 'an answer that is not a JSON object: null'],
    // Quoted cut, it says so: was its first 80 characters bare.
    ['wide', `an answer that is not a JSON object: ${WIDE.slice(0, 79)}…`],
    ['html', "HTTP 200 application/json, not JSON (<html>busy</html>): is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)?"],
    ['huge', 'an answer larger than 1 MiB'],
  ])('%s alone is a 502 that says so; among others it is passed over', async (name, why) => {
    const alone = await chat(`test/${name}`);
    expect(alone.status).toBe(502);
    expect(errorOf(alone.text)).toBe(`All providers for the requested models are unavailable: ${name}: ${why}`);
    const passed = await chat('test/chat', { provider: { order: [name, 'up'] } });
    expect(passed.status).toBe(200);
    const answer = JSON.parse(passed.text);
    expect(answer.provider).toBe('up');
    expect(answer.router_metadata.attempts[0]).toEqual({ provider: name, model: 'test/chat', error: `${name}: ${why}`, ok: false });
  });

  it('a stream asked of a provider that answers an empty object is passed over too', async () => {
    const res = await chat('test/chat', { stream: true, provider: { order: ['empty', 'up'] } });
    expect(res.status).toBe(200);
    const first = JSON.parse(res.text.split('\n\n').find((e) => e.startsWith('data: '))!.slice(6));
    expect(first.provider).toBe('up');
    expect(first.router_metadata.attempts[0]).toMatchObject({ provider: 'empty', error: 'empty: an answer without choices: {}' });
  });

  it('a Responses answer without output is passed over for the next provider', async () => {
    const res = await post('/v1/responses', { model: 'test/chat', input: 'x', provider: { order: ['empty', 'up'] } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).output.length).toBeGreaterThan(0);
    const alone = await post('/v1/responses', { model: 'test/empty', input: 'x' });
    expect(errorOf(alone.text)).toBe('All providers for the requested models are unavailable: empty: an answer without output: {}');
  });

  it('embeddings without data are passed over for the next provider', async () => {
    const res = await post('/v1/embeddings', { model: 'test/embed', input: 'x', provider: { order: ['no-data', 'up'] } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).provider).toBe('up');
    const alone = await post('/v1/embeddings', { model: 'test/no-data', input: 'x' });
    expect(errorOf(alone.text)).toBe('All providers for the requested models are unavailable: no-data: an answer without data: {"object":"list"}');
  });
});

describe('stream events that are no event', () => {
  it.each([
    ['stream-null', 'a stream event that is not a JSON object'],
    ['stream-number', 'a stream event that is not a JSON object'],
    ['huge-event', 'stream broken (an event larger than 1048576 characters)'],
  ])('%s before the first token: passed over, unseen', async (name, why) => {
    const alone = await chat(`test/${name}`, { stream: true });
    expect(alone.status).toBe(502);
    expect(errorOf(alone.text)).toBe(`All providers for the requested models are unavailable: ${name}: ${why}`);
    const passed = await chat('test/chat', { stream: true, provider: { order: [name, 'up'] } });
    expect(passed.status).toBe(200);
    expect(passed.text).toContain('"provider":"up"');
    expect(passed.text).toContain(`${name}: ${why}`);
    expect(passed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('a null event after the first token ends the stream with the error chunk naming the provider', async () => {
    const res = await chat('test/late-null', { stream: true });
    expect(res.status).toBe(200);
    const events = res.text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const last = JSON.parse(events.at(-2)!);
    expect(last.error.message).toBe('Provider returned an error mid-stream: late-null: a stream event that is not a JSON object');
    expect(last.choices[0].finish_reason).toBe('error');
    expect(res.text).not.toContain('"more"');
  });
});

describe('refusals in other servers words', () => {
  it("vLLM's top-level message and Ollama's error string reach the caller under the slug", async () => {
    const vllm = await chat('test/vllm');
    expect(vllm.status).toBe(400);
    expect(errorOf(vllm.text)).toBe('vllm: max_tokens is too large: 99999');
    const ollama = await chat('test/ollama');
    expect(ollama.status).toBe(400);
    expect(errorOf(ollama.text)).toBe('ollama: model "llama9" not found, try pulling it first');
  });
});

describe("the caller's end user", () => {
  it('goes upstream as a hashed identity, never raw, the same for the same user', async () => {
    const before = bodies.length;
    await chat('test/vllm', { user: 'alice@example.com' });
    await chat('test/vllm', { user: 'alice@example.com' });
    const sent = bodies.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.user).toBe(endUser('alice@example.com'));
    expect(sent[1]!.user).toBe(sent[0]!.user);
    expect(JSON.stringify(sent)).not.toContain('alice');
    expect(endUser('bob')).not.toBe(sent[0]!.user);
  });
});

describe('providers that rate limit', () => {
  const rated = (order: string[]) => fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/chat', provider: { only: order, order }, messages: [{ role: 'user', content: 'hi' }] }) });

  it('every provider a 429: the caller gets a 429 with the shortest Retry-After, not a 502', async () => {
    const res = await rated(['rate-7', 'rate-3']);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(((await res.json()) as any).error.message).toBe('All providers for the requested models are rate limited: rate-7: HTTP 429 {"error":{"code":429,"message":"slow down"}}; rate-3: HTTP 429 {"error":{"code":429,"message":"slow down"}}');
  });

  it('a 429 beside another failure is a 502 as before; beside an answer, the answer', async () => {
    const mixed = await rated(['rate-3', 'five']);
    expect(mixed.status).toBe(502);
    expect(mixed.headers.get('retry-after')).toBeNull();
    await mixed.text();
    const ok = await rated(['rate-3', 'up']);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).provider).toBe('up');
  });
});

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { post } from '../support/post.js';
import { startCliEnv } from '../support/cli-env.js';
import { deadPort, localUpstream, sseChunk, type LocalUpstream, withoutGatewayIds } from '../support/upstreams.js';
import { startedForAll } from '../support/for-all.js';

// A gateway attacked as an operator runs it: providers that misbehave in front of another emulator,
// spoken to only over HTTP. Each case failed on the code before its fix.
let dir: string;
let upstream: Emulator;
const locals: LocalUpstream[] = [];
const upKey = () => upstream.store.firstKeys().apiKey;
const ask = (e: Emulator, body: Record<string, unknown>, headers: Record<string, string> = {}) => post({ apiRoot: e.apiRoot, apiKey: e.store.firstKeys().apiKey }, '/v1/chat/completions', body, headers);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-attack7-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
});

afterAll(async () => {
  await upstream?.close();
  for (const l of locals) await l.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('replay of a request whose first provider was passed over while recording', () => {
  it('passes over the provider as it was while recording and answers from the next one, byte for byte', async () => {
    // An upstream that answers a web page: passed over while recording, its failure kept as a take.
    const page = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>Welcome to nginx</p>');
    });
    locals.push(page);
    const cassettes = join(dir, 'cassettes-fallback');
    const file = (pageUrl: string, upUrl: string) => `
providers:
  - { name: page, base_url: "${pageUrl}", models: { t/m: m } }
  - { name: up, base_url: "${upUrl}", api_key_env: UP_KEY, models: { t/m: local/echo } }
`;
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: parseProviders(file(page.baseUrl, `${upstream.apiRoot}/v1`), { UP_KEY: upKey() }), cassettes: { dir: cassettes, mode: 'record' } } });
    const bodies = [false, true].map((stream) => ({ model: 't/m', stream, messages: [{ role: 'user', content: 'fall back, then replay' }] }));
    let recorded: Awaited<ReturnType<typeof ask>>[];
    try {
      recorded = [await ask(recorder, bodies[0]!), await ask(recorder, bodies[1]!)];
    } finally {
      await recorder.close();
    }
    expect(recorded.map((r) => r.status)).toEqual([200, 200]);
    expect(recorded[0]!.json.provider).toBe('up');
    const gone = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: parseProviders(file(gone, gone), {}), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      const replayed = [await ask(player, bodies[0]!), await ask(player, bodies[1]!)];
      expect(replayed.map((r) => r.status)).toEqual([200, 200]);
      expect(withoutGatewayIds(replayed[0]!.text)).toBe(withoutGatewayIds(recorded[0]!.text));
      expect(withoutGatewayIds(replayed[1]!.text)).toBe(withoutGatewayIds(recorded[1]!.text));
      // router_metadata tells the recorded failure as the attempt passed over (it said "replay: no cassette …" before failures were kept).
      const told = await ask(player, bodies[0]!, { 'x-router-metadata': 'enabled' });
      expect(told.json.router_metadata.attempts.map((a: { provider: string; ok: boolean }) => [a.provider, a.ok])).toEqual([
        ['page', false],
        ['up', true],
      ]);
      expect(told.json.router_metadata.attempts[0].error).toMatch(/^page: HTTP 200 text\/html, not JSON/);
      // Never recorded anywhere: still the 404 that names the nearest cassette.
      const miss = await ask(player, { model: 't/m', messages: [{ role: 'user', content: 'never recorded' }] });
      expect(miss.status).toBe(404);
      expect(miss.json.error.message).toMatch(/^replay: no cassette answers this request to page \(model m\); the nearest is .*, which differs in /);
    } finally {
      await player.close();
    }
  });
});

describe('an upstream that compresses its answers', () => {
  it('is asked for none, and one that sends gzip anyway is passed over in words, not garbled bytes', async () => {
    const zipper = await localUpstream((_req, res, body) => {
      const text = body.stream ? `${sseChunk('zipped')}data: [DONE]\n\n` : JSON.stringify({ id: 'z', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'zipped' }, finish_reason: 'stop' }] });
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(text));
    });
    locals.push(zipper);
    const config = parseProviders(
      `
providers:
  - { name: zipper, base_url: "${zipper.baseUrl}", models: { t/z: m } }
  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { t/z: local/echo } }
`,
      { UP_KEY: upKey() },
    );
    const gateway = await startEmulator({ stateDir: join(dir, 'zip'), port: 0, gateway: { config } });
    try {
      for (const stream of [false, true]) {
        const res = await ask(gateway, { model: 't/z', stream, messages: [{ role: 'user', content: 'hi' }] }, { 'x-router-metadata': 'enabled' });
        expect(res.status).toBe(200);
        const meta = stream ? JSON.parse(res.text.split('\n').find((l) => l.includes('router_metadata'))!.slice(6)).router_metadata : res.json.router_metadata;
        expect(meta.attempts.map((a: { provider: string; ok: boolean }) => [a.provider, a.ok])).toEqual([
          ['zipper', false],
          ['up', true],
        ]);
        expect(meta.attempts[0].error).toBe('zipper: an answer in content-encoding gzip, though none was asked for (accept-encoding: identity)');
      }
      expect(zipper.seen.map((h) => h['accept-encoding'])).toEqual(['identity', 'identity']);
    } finally {
      await gateway.close();
    }
  });
});

describe('providers files an operator gets wrong: one line, exit 2, nothing served', () => {
  const t = startedForAll(() => startCliEnv());
  const serveWith = (name: string, text: string) => {
    const path = join(t.dir, name);
    writeFileSync(path, text);
    return t.run(['serve', '--port', '0', '--state', join(t.dir, 'state'), '--providers', path]).then((r) => ({ ...r, path }));
  };

  it('a price under a name it does not know (a typo would make that price 0)', async () => {
    const r = await serveWith('typo.yaml', 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: x }, prices: { t/m: { prompt: 0.1, completoin: 0.2 } } }\n');
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: --providers ${r.path}: provider up: prices.t/m: unknown price "completoin" (known: prompt, completion, USD per token)\n` });
  });

  it('a file that serves no model at all', async () => {
    const r = await serveWith('none.yaml', 'providers: []\nlocal_models: false\n');
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: --providers ${r.path}: the file serves no model: providers is empty and local_models is false\n` });
  });

  it('a cassette edited into something that is not one: --replay, --record and --check-drift say so, exit 2', async () => {
    const folder = join(t.dir, 'edited');
    mkdirSync(folder);
    writeFileSync(join(folder, 'up-m-0123456789ab.json'), '{"provider": "up", "request": ');
    const path = join(t.dir, 'ok.yaml');
    writeFileSync(path, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: x } }\n');
    for (const flag of ['--replay', '--record', '--check-drift']) {
      const r = await t.run(['serve', '--port', '0', '--state', join(t.dir, 'state-c'), '--providers', path, flag, folder]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(new RegExp(`^error: ${flag} ${folder}: cassette up-m-0123456789ab\\.json is not JSON: .+\n$`));
    }
  });

  it("a provider named as the fake models' provider is told so, not 'named twice'", async () => {
    const r = await serveWith('alpha.yaml', 'providers:\n  - { name: local-alpha, base_url: "http://127.0.0.1:9/v1", models: { t/m: x } }\n');
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: --providers ${r.path}: provider local-alpha: the fake models' provider is named so; choose another name\n` });
  });
});

/** A gateway relaying a stream whose upstream sent one token ('Hello') and then nothing: the caller's reader once that token is read. */
async function streamHalfway(state: string, cassettes?: { dir: string; mode: 'record' }) {
  const halfway = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk('Hello'));
    // then nothing more, for longer than any test runs (timeout_ms below)
  });
  locals.push(halfway);
  const config = parseProviders(`providers:\n  - { name: half, base_url: "${halfway.baseUrl}", timeout_ms: 3600000, models: { t/h: m } }\n`, {});
  const gateway = await startEmulator({ stateDir: join(dir, state), port: 0, gateway: { config, ...(cassettes ? { cassettes } : {}) } });
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 't/h', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
  return { reader, gateway, text };
}

describe('a gateway stopped (SIGTERM) with requests in flight', () => {
  it('ends a relayed stream with the error chunk and [DONE], and lets a stalled upstream go at once', async () => {
    const { reader, gateway, text: first } = await streamHalfway('stop-stream');
    let text = first;
    await gateway.close();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events.at(-1)).toBe('data: [DONE]');
    const last = JSON.parse(events.at(-2)!.slice(6));
    expect(last.error.message).toBe('Provider returned an error mid-stream: half: the gateway is stopping');
    expect(last.choices[0].finish_reason).toBe('error');
  });

  it("keeps no result for a batch request whose upstream was let go; the restart asks it again, once", async () => {
    let answer = false;
    const later = await localUpstream((_req, res) => {
      if (!answer) return; // stalls until the gateway is stopped
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'answered' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
    locals.push(later);
    const config = parseProviders(`providers:\n  - { name: later, base_url: "${later.baseUrl}", timeout_ms: 3600000, models: { t/b: m } }\n`, {});
    const stateDir = join(dir, 'stop-batch');
    let gateway = await startEmulator({ stateDir, port: 0, gateway: { config }, batchDelayMs: 0 });
    const created = await post({ apiRoot: gateway.apiRoot, apiKey: gateway.store.firstKeys().apiKey }, '/v1/batches', { endpoint: '/v1/chat/completions', model: 't/b', requests: [{ custom_id: 'one', body: { model: 't/b', messages: [{ role: 'user', content: 'hi' }] } }] });
    expect(created.status).toBe(202);
    while (later.seen.length === 0) await new Promise((r) => setTimeout(r, 20));
    await gateway.close();
    answer = true;
    gateway = await startEmulator({ stateDir, port: 0, gateway: { config }, batchDelayMs: 0 });
    try {
      const get = () => fetch(`${gateway.apiRoot}/v1/batches/${created.json.id}`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}` } }).then((r) => r.json() as Promise<any>);
      let batch = await get();
      while (batch.status !== 'completed' && batch.status !== 'failed') batch = await new Promise((r) => setTimeout(r, 50)).then(get);
      expect(batch.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
      expect(batch.results.map((r: any) => [r.custom_id, r.response.status_code, r.response.body.choices?.[0]?.message.content])).toEqual([['one', 200, 'answered']]);
    } finally {
      await gateway.close();
    }
  });
});

describe('a whole chat answer with no choices', () => {
  it('is passed over like a stream that ends before any token, not relayed as an answer', async () => {
    const empty = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'e', object: 'chat.completion', created: 1, model: 'm', choices: [] }));
    });
    locals.push(empty);
    const config = parseProviders(`providers:\n  - { name: empty, base_url: "${empty.baseUrl}", models: { t/e: m } }\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { t/e: local/echo } }\n`, { UP_KEY: upKey() });
    const gateway = await startEmulator({ stateDir: join(dir, 'empty'), port: 0, gateway: { config } });
    try {
      const res = await ask(gateway, { model: 't/e', messages: [{ role: 'user', content: 'say something' }] }, { 'x-router-metadata': 'enabled' });
      expect(res.status).toBe(200);
      expect(res.json.provider).toBe('up');
      expect(res.json.choices[0].message.content).toBe('say something');
      expect(res.json.router_metadata.attempts[0]).toMatchObject({ provider: 'empty', ok: false, error: expect.stringMatching(/^empty: an answer with no choices/) });
    } finally {
      await gateway.close();
    }
  });
});

describe('a stream the relay leaves at an event it cannot relay', () => {
  const hiThenError = () =>
    localUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk('Hi'));
      res.write(`data: ${JSON.stringify({ error: { message: 'overloaded', code: 529 } })}\n\n`);
      // then nothing, the connection kept open: an upstream still generating
      req.socket.once('close', () => closed.push(true));
    });
  const closed: boolean[] = [];

  it('lets the upstream go at once, not after timeout_ms', async () => {
    const up = await hiThenError();
    locals.push(up);
    const config = parseProviders(`providers:\n  - { name: errs, base_url: "${up.baseUrl}", timeout_ms: 3600000, models: { t/x: m } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(dir, 'let-go'), port: 0, gateway: { config } });
    try {
      const res = await ask(gateway, { model: 't/x', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.text).toMatch(/"message":"Provider returned an error mid-stream: \{\\"message\\":\\"overloaded\\",\\"code\\":529\}".*\n\ndata: \[DONE\]\n\n$/s);
      // The upstream's connection is closed by the gateway (on the old code it stayed open for timeout_ms).
      while (!closed.length) await new Promise((r) => setTimeout(r, 20));
      expect(closed).toEqual([true]);
    } finally {
      await gateway.close();
    }
  });

  it('is recorded as it came, and replayed byte for byte, error chunk and all', async () => {
    const up = await hiThenError();
    locals.push(up);
    const cassettes = join(dir, 'cassettes-error');
    const file = (url: string) => parseProviders(`providers:\n  - { name: errs, base_url: "${url}", models: { t/x: m } }\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { t/x: local/echo } }\n`, { UP_KEY: upKey() });
    const body = { model: 't/x', stream: true, messages: [{ role: 'user', content: 'record the break' }] };
    const recorder = await startEmulator({ stateDir: join(dir, 'rec-error'), port: 0, gateway: { config: file(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    const recorded = await ask(recorder, body).finally(() => recorder.close());
    expect(recorded.text).toMatch(/Provider returned an error mid-stream/);
    const gone = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'play-error'), port: 0, gateway: { config: file(gone), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      expect(withoutGatewayIds((await ask(player, body)).text)).toBe(withoutGatewayIds(recorded.text));
    } finally {
      await player.close();
    }
  });

  it('a stream cut by the gateway stopping is not recorded', async () => {
    const cassettes = join(dir, 'cassettes-stop');
    const { reader, gateway } = await streamHalfway('rec-stop', { dir: cassettes, mode: 'record' });
    await gateway.close();
    while (!(await reader.read()).done);
    expect(readdirSync(cassettes)).toEqual([]);
  });
});

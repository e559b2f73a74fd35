import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { APIError, ConnectionError, RouterClient, StreamError, ValidationError } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { waitBound } from '../support/until.js';

// The exported library, as a program that imports it would use it.
let emu: Emulator;
let dir: string;
let client: RouterClient;
let mgmt: RouterClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-client-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey, managementKey } = emu.store.firstKeys();
  client = new RouterClient({ apiKey, apiRoot: emu.apiRoot, maxRetries: 1 });
  mgmt = new RouterClient({ apiKey: managementKey, apiRoot: emu.apiRoot });
});
afterAll(async () => {
  await client.close();
  await mgmt.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const user = (content: string) => [{ role: 'user' as const, content }];

describe('RouterClient', () => {
  it('chat: create and stream, with usage and cost', async () => {
    const c = await client.chat.create({ model: 'local/echo', messages: user('hi') });
    expect(c.choices[0]!.message.content).toBe('hi');
    expect(c.usage.cost).toBeGreaterThan(0);
    let text = '';
    let sawUsage = false;
    for await (const chunk of await client.chat.stream({ model: 'local/lorem', messages: user('write 8 words') })) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) sawUsage = true;
    }
    expect(text.trim().split(/\s+/)).toHaveLength(8);
    expect(sawUsage).toBe(true);
  });

  it('embeddings, models, speech (management key), batches', async () => {
    const e = await client.embeddings.create({ model: 'local/embed', input: ['a', 'b'], dimensions: 4 });
    expect(e.data).toHaveLength(2);
    expect((await client.models.list()).map((m) => m.id)).toContain('local/echo');
    const audio = await mgmt.speech.create({ model: 'local/tts', voice: 'alloy', input: 'hi', response_format: 'pcm' });
    let bytes = 0;
    for await (const chunk of audio.chunks) bytes += chunk.length;
    expect(bytes).toBeGreaterThan(1000);
    const page = await client.batches.list({ limit: 1 });
    expect(page.object).toBe('list');
  });

  it('batches.getStreaming: what onResult throws comes out as it is, not as a connection error', async () => {
    const requests = ['a', 'b', 'c'].map((id) => ({ custom_id: id, body: { messages: user(id) } }));
    let batch = await client.batches.create({ endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests });
    // Until it is done (200 looks, 4 s, can be too few on a loaded machine).
    for (const end = Date.now() + waitBound(); batch.status !== 'completed' && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 20));
      batch = await client.batches.get(batch.id);
    }
    expect(batch.status).toBe('completed');
    const seen: string[] = [];
    const whole = await client.batches.getStreaming(batch.id, (json) => void seen.push(JSON.parse(json.toString()).custom_id));
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    expect(whole.id).toBe(batch.id);
    const full = new Error('no room left on the device');
    const err = await client.batches.getStreaming(batch.id, () => {
      throw full;
    }).catch((e) => e);
    expect(err).toBe(full);
  });

  it('typed errors: status classes, a stream error, a refused connection', async () => {
    const err = await client.batches.get('batch_none').catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(404);
    // A speed of 0 or less, NaN (JSON's null) or a string: refused before it is sent (was sent; the service's 400).
    const asked = emu.requestLog.length;
    for (const speed of [0, -1, Number.NaN, Infinity, '2' as unknown as number]) {
      const bad = await mgmt.speech.create({ model: 'local/tts', voice: 'alloy', input: 'x', speed }).catch((e) => e);
      expect(bad).toBeInstanceOf(ValidationError);
      expect(bad.message).toMatch(/^speed must be a number over 0 \(a multiplier: 1 is normal\), not .+: nothing was sent$/);
    }
    expect(emu.requestLog.length).toBe(asked);
    const forbidden = await client.speech.create({ model: 'local/tts', voice: 'alloy', input: 'x' }).catch((e) => e);
    expect(forbidden).toBeInstanceOf(APIError);
    expect(forbidden.status).toBe(403);
    const stream = await client.chat.stream({ model: 'local/lorem', messages: user('write 30 words') }, { headers: { 'x-router-fault': 'error-chunk,after=2' } }).catch((e) => e);
    const caught = await (async () => {
      try {
        for await (const _ of stream) {
          /* drain */
        }
      } catch (e) {
        return e;
      }
    })();
    expect(caught).toBeInstanceOf(StreamError);
    const down = new RouterClient({ apiKey: 'x', apiRoot: 'http://127.0.0.1:9/api', maxRetries: 0 });
    expect(await down.chat.create({ model: 'a/b', messages: user('x') }).catch((e) => e)).toBeInstanceOf(ConnectionError);
    await down.close();
  });

  it("goes through a caller's dispatcher, and close() leaves it open", async () => {
    const agent = new Agent();
    const dispatch = agent.dispatch.bind(agent);
    let dispatched = 0;
    agent.dispatch = (options, handler) => (dispatched++, dispatch(options, handler));
    const own = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot, dispatcher: agent });
    expect((await own.chat.create({ model: 'local/echo', messages: user('hi') })).choices[0]!.message.content).toBe('hi');
    expect(dispatched).toBe(1);
    await own.close();
    await own.close();
    expect(agent.closed).toBe(false);
    const res = await agent.request({ origin: new URL(emu.apiRoot).origin, path: '/api/v1/models', method: 'GET' });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
    await agent.close();
  });

  it('close() of a client with nothing in flight formats no error stack (the CLI bundle would read its every line end)', async () => {
    const used = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
    expect((await used.chat.create({ model: 'local/echo', messages: user('hi') })).choices[0]!.message.content).toBe('hi');
    const formatted: string[] = [];
    const before = Error.prepareStackTrace;
    Error.prepareStackTrace = (err, frames) => {
      formatted.push(String((err as Error).message));
      return before ? before(err, frames) : String(err);
    };
    try {
      await used.close();
    } finally {
      Error.prepareStackTrace = before;
    }
    expect(formatted).toEqual([]);
    expect(await used.models.list().catch((e) => e)).toBeInstanceOf(ConnectionError);
  });

  it('close() twice is one close, as a finally after a close does', async () => {
    const once = new RouterClient({ apiKey: 'x', apiRoot: emu.apiRoot });
    await once.close();
    await expect(once.close()).resolves.toBeUndefined();
    // A call after close() is refused as a connection error, not undici's own.
    expect(await once.models.list().catch((e) => e)).toBeInstanceOf(ConnectionError);
  });

  it('a call after close() is refused at once: said so, nothing sent, never retried nor "maybe delivered"', async () => {
    const sent = emu.requestLog.length;
    const closed = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot, maxRetries: 5 });
    expect((await closed.chat.create({ model: 'local/echo', messages: user('hi') })).choices[0]!.message.content).toBe('hi');
    await closed.close();
    for (const call of [() => closed.chat.create({ model: 'local/echo', messages: user('again') }), () => closed.chat.stream({ model: 'local/echo', messages: user('again') })]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect(err).toMatchObject({ message: 'this client is closed (its close() was called): nothing sent; make a new one to send more', maybeDelivered: false });
      expect((err as { retries?: number }).retries ?? 0).toBe(0);
    }
    expect(emu.requestLog.length).toBe(sent + 1);
  });

  it('options that cannot work are refused when the client is made, not as a network error later', () => {
    const made = (o: object) => {
      try {
        return new RouterClient({ apiKey: 'x', ...o });
      } catch (e) {
        return e;
      }
    };
    for (const [o, message] of [
      [{ apiRoot: 'not a url' }, 'apiRoot must be an http(s) URL such as https://openrouter.ai/api, got "not a url"'],
      [{ apiRoot: 'ftp://127.0.0.1/api' }, 'apiRoot must be an http(s) URL such as https://openrouter.ai/api, got "ftp://127.0.0.1/api"'],
      [{ timeoutMs: -5 }, 'timeoutMs must be a number of milliseconds over 0, not -5'],
      [{ timeoutMs: '5000' }, 'timeoutMs must be a number of milliseconds over 0, not "5000"'],
      [{ timeoutMs: Number.NaN }, 'timeoutMs must be a number of milliseconds over 0, not NaN'],
      [{ maxRetries: -1 }, 'maxRetries must be a whole number of at least 0, not -1'],
      [{ maxRetries: 1.5 }, 'maxRetries must be a whole number of at least 0, not 1.5'],
    ] as const) {
      const err = made(o);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toBe(message);
    }
  });

  it('an API root given as the base URL (with /v1, as the service documents it) is taken without it', async () => {
    const base = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: `${emu.apiRoot}/v1/` });
    expect(base.core.apiRoot).toBe(emu.apiRoot);
    expect((await base.chat.create({ model: 'local/echo', messages: user('hi') })).choices[0]!.message.content).toBe('hi');
    await base.close();
  });
});

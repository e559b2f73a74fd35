import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../dist/emulator/server.js';
import { BIN } from '../helpers.js';

// `router serve --providers --record / --replay / --record-missing`, the real binary: answers
// recorded from an upstream emulator are replayed byte for byte once that upstream is gone.
const dir = mkdtempSync(join(tmpdir(), 'router-cassettes-'));
const cassettes = join(dir, 'cassettes');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Serve {
  child: ChildProcess;
  apiRoot: string;
  apiKey: string;
  stop(): Promise<void>;
}

async function serve(args: string[], env: Record<string, string>): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', join(dir, 'gateway-state'), '--json', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const ready = await new Promise<{ api_root: string; api_key: string }>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (c) => (err += c));
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error(`serve exited before it listened: ${err}`)));
  });
  return {
    child,
    apiRoot: ready.api_root,
    apiKey: ready.api_key,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function providersFile(upstream: Emulator, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, `providers:\n  - name: up\n    base_url: ${upstream.apiRoot}/v1\n    api_key_env: UP_KEY\n    models: { test/chat: local/lorem }\n    prices: { test/chat: { prompt: 0.000001, completion: 0.000002 } }\n`);
  return path;
}

const REQUESTS = [
  { model: 'test/chat', messages: [{ role: 'user', content: 'write 12 words about tides' }] },
  { model: 'test/chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'write 30 words about rivers' }] },
  { model: 'test/chat', temperature: 0.5, messages: [{ role: 'user', content: 'write 12 words about tides' }] },
];

async function post(g: Serve, body: unknown) {
  const res = await fetch(`${g.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

describe('record and replay', () => {
  it('records every exchange, then replays it byte for byte with the upstream gone; a miss names the nearest', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
    const env = { UP_KEY: upstream.store.firstKeys().apiKey };
    const file = providersFile(upstream, 'providers.yaml');
    const recording = await serve(['--providers', file, '--record', cassettes], env);
    const recorded = [];
    try {
      for (const body of REQUESTS) recorded.push(await post(recording, body));
    } finally {
      await recording.stop();
      await upstream.close();
    }
    expect(recorded.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(recorded[1]!.text).toContain('data: [DONE]');

    const files = readdirSync(cassettes);
    expect(files).toHaveLength(3);
    const texts = files.map((f) => readFileSync(join(cassettes, f), 'utf8'));
    for (const t of texts) expect(t).not.toContain(env.UP_KEY);
    const stream = texts.map((t) => JSON.parse(t)).find((c) => c.response.chunks);
    expect(stream.request.body).toMatchObject({ model: 'local/lorem', stream: true, messages: REQUESTS[1]!.messages });
    expect(stream.response.chunks.at(-1).data).toBe('[DONE]');
    expect(typeof stream.response.chunks[0].after_ms).toBe('number');

    const replaying = await serve(['--providers', file, '--replay', cassettes], env);
    try {
      // Asked in another order: matched on what they ask, not on when.
      for (const i of [2, 1, 0]) expect(await post(replaying, REQUESTS[i])).toEqual(recorded[i]);
      const miss = await post(replaying, { ...REQUESTS[0], messages: [{ role: 'user', content: 'never asked' }] });
      expect(miss.status).toBe(404);
      const message = JSON.parse(miss.text).error.message as string;
      expect(message).toMatch(/^replay: no cassette answers this request to up \(model local\/lorem\); the nearest is .*cassettes\/up-local_lorem-\w+\.json, which differs in messages$/);
    } finally {
      await replaying.stop();
    }
  }, 60_000);

  it('--record-missing asks the upstream only for what no cassette holds', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream-2'), port: 0 });
    try {
      const env = { UP_KEY: upstream.store.firstKeys().apiKey };
      const gateway = await serve(['--providers', providersFile(upstream, 'providers-2.yaml'), '--replay', cassettes, '--record-missing'], env);
      try {
        const before = readdirSync(cassettes).length;
        expect((await post(gateway, REQUESTS[0])).status).toBe(200);
        expect(upstream.requestLog.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
        expect((await post(gateway, { ...REQUESTS[0], messages: [{ role: 'user', content: 'new one' }] })).status).toBe(200);
        expect(upstream.requestLog.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
        expect(readdirSync(cassettes)).toHaveLength(before + 1);
      } finally {
        await gateway.stop();
      }
    } finally {
      await upstream.close();
    }
  }, 60_000);
});

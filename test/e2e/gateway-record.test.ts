import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../dist/emulator/server.js';
import { BIN } from '../helpers.js';
import { until, waitBound } from '../support/until.js';
import { withoutGatewayIds } from '../support/upstreams.js';
import { shellStatus } from '../support/run-process.js';
import { writerOf } from '../support/cassette-writer.js';

// `router serve --providers --record / --replay / --record-missing`, the real binary: answers
// recorded from an upstream emulator are replayed byte for byte once that upstream is gone.
const dir = mkdtempSync(join(tmpdir(), 'router-cassettes-'));
const cassettes = join(dir, 'cassettes');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Serve {
  child: ChildProcess;
  apiRoot: string;
  apiKey: string;
  /** What it wrote to stderr so far. */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

async function serve(args: string[], env: Record<string, string>, state = 'gateway-state'): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', join(dir, state), '--json', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(shellStatus(code, signal))));
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  const ready = await new Promise<{ api_root: string; api_key: string }>((resolve, reject) => {
    let out = '';
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
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
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

async function post(g: Serve, body: unknown, signal?: AbortSignal) {
  const res = await fetch(`${g.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  return { status: res.status, text: withoutGatewayIds(await res.text()) };
}

/** Waits (bounded by the rest of the test's bound) until `dir` holds `n` cassettes. */
async function cassettesIn(where: string, n: number): Promise<string[]> {
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const files = readdirSync(where).filter((f) => f.endsWith('.json'));
    if (files.length >= n) return files;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${where} never held ${n} cassettes`);
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
      expect(message).toMatch(/^replay: no cassette answers this request to up \(model local\/lorem\); the nearest is .*cassettes\/up-local_lorem-\w+\.json, which differs in messages; router serve --record-missing would ask up for it and keep its answer$/);
      // Said on the serve terminal too, one line (before: nothing there, only the caller knew).
      expect(await until(() => replaying.stderr().includes('replay: no cassette'))).toBe(true);
      expect(replaying.stderr().split('\n').filter((l) => l.startsWith('replay:'))).toEqual([message]);
    } finally {
      await replaying.stop();
    }
  });

  it('--record-missing asks the upstream only for what no cassette holds', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream-2'), port: 0 });
    try {
      const env = { UP_KEY: upstream.store.firstKeys().apiKey };
      const gateway = await serve(['--providers', providersFile(upstream, 'providers-2.yaml'), '--replay', cassettes, '--record-missing'], env);
      try {
        const before = readdirSync(cassettes).filter((f) => f.endsWith('.json')).length;
        expect((await post(gateway, REQUESTS[0])).status).toBe(200);
        expect(upstream.requestLog.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
        expect((await post(gateway, { ...REQUESTS[0], messages: [{ role: 'user', content: 'new one' }] })).status).toBe(200);
        expect(upstream.requestLog.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
        // Written off the event loop: it lands just after the answer.
        expect(await cassettesIn(cassettes, before + 1)).toHaveLength(before + 1);
      } finally {
        await gateway.stop();
      }
    } finally {
      await upstream.close();
    }
  });

  it('writes cassettes off the event loop: answers go on while a cassette cannot be written yet', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream-3'), port: 0 });
    const where = join(dir, 'cassettes-fifo');
    const env = { UP_KEY: upstream.store.firstKeys().apiKey };
    const gateway = await serve(['--providers', providersFile(upstream, 'providers-3.yaml'), '--record', where], env, 'gateway-state-3');
    try {
      expect((await post(gateway, REQUESTS[0])).status).toBe(200);
      const [file] = await cassettesIn(where, 1);
      // The same request again writes its second take (`…-2.json`), through its temp file: a FIFO here,
      // so the write waits until this test reads it. A write on the event loop would hold every answer.
      const take2 = file!.replace(/\.json$/, '-2.json');
      execFileSync('mkfifo', [join(where, `${take2}.${writerOf(gateway.child.pid!)}.tmp`)]);
      const again = await post(gateway, REQUESTS[0], AbortSignal.timeout(30_000));
      expect(again.status).toBe(200);
      const models = await fetch(`${gateway.apiRoot}/v1/models`, { headers: { authorization: `Bearer ${gateway.apiKey}` }, signal: AbortSignal.timeout(30_000) });
      expect(models.status).toBe(200);
      const written = JSON.parse(await readFile(join(where, `${take2}.${writerOf(gateway.child.pid!)}.tmp`), 'utf8'));
      expect(written.response.body.id).toMatch(/^gen-/);
      expect(JSON.stringify(written.response.body)).not.toContain('gen-ID');
      expect(await gateway.stop()).toBe(0);
    } finally {
      // A gateway stuck in a write never stops by SIGTERM.
      gateway.child.kill('SIGKILL');
      await upstream.close();
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`a gateway stopped by ${signal} right after its answers has every cassette on disk, whole, replayed byte for byte`, async () => {
      const upstream = await startEmulator({ stateDir: join(dir, `upstream-${signal}`), port: 0 });
      const where = join(dir, `cassettes-${signal}`);
      const env = { UP_KEY: upstream.store.firstKeys().apiKey };
      const file = providersFile(upstream, `providers-${signal}.yaml`);
      const asked = Array.from({ length: 24 }, (_, i) => ({ ...REQUESTS[i % 2]!, messages: [{ role: 'user', content: `write ${10 + i} words about ${signal}` }] }));
      const recording = await serve(['--providers', file, '--record', where], env, `gateway-state-${signal}`);
      let recorded: { status: number; text: string }[];
      try {
        recorded = await Promise.all(asked.map((body) => post(recording, body)));
      } finally {
        // At once: no cassette is waited for before the signal.
        expect(await recording.stop(signal)).toBe(signal === 'SIGINT' ? 130 : 0);
        await upstream.close();
      }
      expect(recorded.map((r) => r.status)).toEqual(asked.map(() => 200));
      const files = readdirSync(where);
      expect(files.filter((f) => !f.endsWith('.json'))).toEqual([]);
      expect(files).toHaveLength(asked.length);
      for (const f of files) expect(statSync(join(where, f)).isFile()).toBe(true);
      const replaying = await serve(['--providers', file, '--replay', where, '--replay-timing', '0'], env, `gateway-state-${signal}`);
      try {
        for (const [i, body] of asked.entries()) expect(await post(replaying, body)).toEqual(recorded[i]);
      } finally {
        await replaying.stop();
      }
    });
  }
});

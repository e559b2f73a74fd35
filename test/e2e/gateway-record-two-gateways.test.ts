import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../dist/emulator/server.js';
import { spawnServe, type Serve } from '../support/serve-process.js';
import { SETTLE } from '../support/until.js';

// Two `router serve` processes recording into one folder (docs/gateway.md, Record and replay): a
// gateway's start removes the partial cassettes a killed one left, never those of a gateway still
// recording there (before: every `.json.partial` went, the other's stream under way included, and a
// kill -9 of that one then left nothing of it). And `--replay DIR --record-missing` makes its folder
// as `--record` does (before: "no such folder"); `--replay` alone still refuses a missing one.
const dir = mkdtempSync(join(tmpdir(), 'router-record-two-'));
const started: { g: Serve; stderr: () => string }[] = [];
let upstream: Emulator | undefined;
afterEach(async () => {
  for (const { g } of started.splice(0)) {
    if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
    await g.exited;
  }
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const BODY = { model: 'test/m', stream: true, max_tokens: 200, messages: [{ role: 'user', content: 'write 150 words about tides' }] };

async function serve(args: string[], state: string) {
  upstream ??= await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem } }\n`);
  const g = await spawnServe(['--state', join(dir, state), '--providers', providers, ...args], { UP_KEY: upstream.store.firstKeys().apiKey, HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg') });
  let err = '';
  g.child.stderr!.on('data', (c) => (err += c));
  const s = { g, stderr: () => err };
  started.push(s);
  return s;
}

const ask = (g: Serve, body: object = BODY) =>
  fetch(`${g.info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const stop = async (s: { g: Serve }, signal: NodeJS.Signals = 'SIGTERM') => {
  s.g.child.kill(signal);
  await s.g.exited;
};

describe('two gateways recording into one folder', () => {
  it("a second gateway's start leaves the partial cassette of the first's stream under way; a killed one's it removes", async () => {
    const cassettes = join(dir, 'shared');
    const first = await serve(['--record', cassettes], 'state-1');
    // The upstream sends the stream's first KiB, then holds the rest: the first gateway is mid-stream.
    const faults = await fetch(`${upstream!.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream!.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['held,after=1,times=1,path=/v1/chat/completions'] }) });
    expect(faults.status).toBe(200);
    const res = await ask(first.g);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const partial = () => readdirSync(cassettes).find((f) => f.endsWith('.partial'));
    await vi.waitFor(() => expect(partial()).toBeDefined(), SETTLE);
    const path = join(cassettes, partial()!);
    await vi.waitFor(() => expect(readFileSync(path, 'utf8').split('\n').length).toBeGreaterThan(2), SETTLE);

    const second = await serve(['--replay', cassettes, '--record-missing'], 'state-2');
    // Said (if at all) before it listens; an answer of its own makes sure stderr was read that far.
    expect((await ask(second.g, { ...BODY, messages: [{ role: 'user', content: 'another' }] })).status).toBe(200);
    // Before: "record: ….json.partial was a partial recording (its gateway was stopped mid-stream): removed", the first's still under way.
    expect(second.stderr()).not.toContain('partial recording');
    expect(existsSync(path)).toBe(true);
    await stop(second);
    // Told apart by its name: `<file>.json.<pid>.partial`, the pid of the gateway writing it.
    expect(path).toMatch(new RegExp(`\\.json\\.${first.g.child.pid}\\.partial$`));

    // The first killed -9 mid-stream: now its partial is a leftover, and the next start removes it.
    await stop(first, 'SIGKILL');
    void reader.cancel().catch(() => undefined);
    expect(existsSync(path)).toBe(true);
    const third = await serve(['--replay', cassettes, '--record-missing'], 'state-3');
    await vi.waitFor(() => expect(third.stderr()).toContain(`record: ${path} was a partial recording (its gateway was stopped mid-stream): removed, to be recorded again`), SETTLE);
    expect(existsSync(path)).toBe(false);
    await stop(third);
  });

  it('--replay DIR --record-missing makes a missing folder and records into it', async () => {
    const cassettes = join(dir, 'not-yet', 'cassettes');
    const filling = await serve(['--replay', cassettes, '--record-missing'], 'state-4');
    const res = await ask(filling.g, { ...BODY, stream: false });
    expect(res.status).toBe(200);
    await stop(filling);
    expect(readdirSync(cassettes).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    // `--replay` alone still refuses a missing folder (test/inprocess/serve-gateway.test.ts).
  });
});

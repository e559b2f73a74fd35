import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../dist/emulator/server.js';
import { servesKilledAfterEach, stateAtNextStart, type Serve } from '../support/serve-process.js';
import { SETTLE } from '../support/until.js';

// A gateway killed -9 while it reads a whole answer its caller hung up on (docs/gateway.md, Hang-ups): the
// hold is given back at the next start, or the charge kept, once, with the generation that explains it.
const dir = mkdtempSync(join(tmpdir(), 'router-whole-kill-'));
let upstream: Emulator;
const serving = servesKilledAfterEach();
const round = (n: number) => Math.round(n * 1e10) / 1e10;

beforeAll(async () => {
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const upstreamAsked = () => upstream.requestLog.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length;

/** A gateway on `state` in front of the upstream, its answer slowed by `delayMs`; the caller hangs up once the upstream has the request. */
async function hangUpOn(state: string, delayMs: number, env: Record<string, string> = {}): Promise<Serve> {
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem }, prices: { test/m: { prompt: 0.000001, completion: 0.000002 } } }\n`);
  const faults = await fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: [`slow,delay_ms=${delayMs},times=1,path=/v1/chat/completions`] }) });
  expect(faults.status).toBe(200);
  const g = await serving(['--state', state, '--providers', providers], { UP_KEY: upstream.store.firstKeys().apiKey, ...env });
  const before = upstreamAsked();
  const caller = new AbortController();
  const answer = fetch(`${g.info.api_root}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${g.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', max_tokens: 40, messages: [{ role: 'user', content: 'write 20 words' }] }) });
  await vi.waitFor(() => expect(upstreamAsked()).toBe(before + 1), SETTLE);
  caller.abort();
  await expect(answer).rejects.toThrow();
  return g;
}

describe('a gateway killed -9 while it reads a whole answer its caller left', () => {
  it('before the answer came: the hold is given back at the next start, nothing charged', async () => {
    const state = join(dir, 'before');
    const g = await hangUpOn(state, 600_000);
    g.child.kill('SIGKILL');
    await g.exited;
    expect(await stateAtNextStart(state)).toEqual({ usage: 0, generations: [] });
  });

  const used = async (g: Serve) => ((await (await fetch(`${g.info.api_root}/v1/credits`, { headers: { authorization: `Bearer ${g.info.management_key}` } })).json()) as { data: { total_usage: number } }).data.total_usage;

  it.each([
    ['as its charge is written (its second journal line, after the hold)', true],
    ['once the charge replaced the hold', false],
  ])('killed %s: charged once, as its generation says', async (_name, atLine) => {
    const state = join(dir, `killed-${atLine}`);
    const g = await hangUpOn(state, 3_000, atLine ? { ROUTER_EMULATOR_CRASH_AT: 'journal-line-written:2' } : {});
    if (!atLine) {
      // The hold was taken before the upstream was asked; the answer's charge replaces it.
      const held = await used(g);
      expect(held).toBeGreaterThan(0);
      await vi.waitFor(async () => expect(await used(g)).not.toBe(held), SETTLE);
      g.child.kill('SIGKILL');
    }
    await g.exited;
    const { usage, generations } = await stateAtNextStart(state);
    if (atLine) expect(g.child.signalCode).toBe('SIGKILL');
    // Charged, once: the one generation's cost (made again at the start when the kill came before its record).
    expect(generations).toHaveLength(1);
    expect(generations[0]).toMatchObject({ streamed: false, cancelled: false });
    expect(usage).toBeGreaterThan(0);
    expect(usage).toBeCloseTo(round(generations[0]!.total_cost as number), 10);
  });
});

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BIN, runCli, startTestEnv, type TestEnv } from '../helpers.js';
import { SETTLE, until } from '../support/until.js';
import { spawnServe, type Serve } from '../support/serve-process.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { reconcile } from '../../src/kit/spend/reconcile.js';

// A CLI killed -9 (or a call lost) before its answer's head named the generation: the service may have charged it
// (a whole answer is read to its end and charged after its caller went, docs/gateway.md), and its ledger line has no
// generation id to ask about. `usage --reconcile` settles it by what its key spent while it was sent (a management key's
// POST /v1/analytics/query), less what the calls the ledger names cost; an hour after it was sent.
type Line = { id?: string; cost: number; unsettled?: string; reconciles?: string; real_cost?: number; key_hash?: string; sent_after?: string; sent_before?: string; endpoint: string };

const HOUR = 60 * 60 * 1000;
const lines = (state: string) => readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
const holds = (state: string) => (existsSync(join(state, 'budget-holds')) ? readdirSync(join(state, 'budget-holds')).filter((n) => n.endsWith('.json')) : []);

interface Service {
  root: string;
  apiKey: string;
  managementKey: string;
  /** What the account has used so far (GET /v1/credits: charges, and what requests under way hold). */
  used: () => Promise<number>;
  /** Requests for a whole chat answer the service (or its upstream, for a gateway) has been sent. */
  asked: () => number;
  /** Whether the killed call's request has ended at the service (answered, charged or let go). */
  ended: (usedBefore: number, keyBefore: number) => Promise<boolean>;
}

/** What the key has been charged (GET /v1/key: charges only; the account's credits count requests' holds as well). */
async function keyUsage(root: string, key: string): Promise<number> {
  const res = await fetch(`${root}/v1/key`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { data: { usage: number } }).data.usage;
}

async function usedOf(root: string, managementKey: string): Promise<number> {
  const res = await fetch(`${root}/v1/credits`, { headers: { authorization: `Bearer ${managementKey}` } });
  return ((await res.json()) as { data: { total_usage: number } }).data.total_usage;
}

/**
 * `router chat --no-stream` under a budget at `svc`, killed -9 once the service was sent the request (its answer slowed
 * long past the kill), then the next call lets its hold go: the ledger line it leaves, and what the service charged for it.
 */
async function killedBeforeNamed(svc: Service, state: string, model: string): Promise<{ line: Line; charged: number; env: Record<string, string> }> {
  const env: Record<string, string> = { ROUTER_API_ROOT: svc.root, ROUTER_API_KEY: svc.apiKey, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5', ROUTER_CONFIG_DIR: join(state, 'config'), ROUTER_KEYCHAIN: 'off', ROUTER_MANAGEMENT_KEY: '', ROUTER_PROFILE: '', ROUTER_MODEL: '' };
  const before = await keyUsage(svc.root, svc.apiKey);
  const usedBefore = await svc.used();
  const asked = svc.asked();
  const child = spawn(process.execPath, [BIN, 'chat', '--no-stream', '--model', model, '--max-tokens', '200', 'write 500 words'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise((r) => child.on('close', r));
  try {
    expect(await until(() => holds(state).length > 0 && svc.asked() > asked)).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await closed;
  }
  // What the service charged for it, once it ended: a gateway reads the answer to its end after the kill and charges
  // it then (its credits count the request's hold until then); a fake model's hang-up before any content is free.
  await vi.waitFor(async () => expect(await svc.ended(usedBefore, before)).toBe(true), SETTLE);
  const charged = Math.round(((await keyUsage(svc.root, svc.apiKey)) - before) * 1e10) / 1e10;
  // The next call under the budget finds the dead process's hold and puts its bound in the ledger.
  const next = await runCli(['chat', '--model', model, '--max-tokens', '5', 'hi'], { env });
  expect(next.code, next.stderr).toBe(0);
  const line = lines(state).find((l) => l.unsettled)!;
  return { line, charged, env };
}

/** The kit's reconcile as `router usage --reconcile` runs it, `later` ms from now, with the management key. */
async function reconcileLater(svc: Service, state: string, later: number, managementKey: string | null = svc.managementKey) {
  const client = new RouterClient({ apiKey: svc.apiKey, apiRoot: svc.root });
  const manager = managementKey === null ? undefined : new RouterClient({ apiKey: managementKey, apiRoot: svc.root });
  try {
    return await reconcile({ env: { ROUTER_STATE_DIR: state }, profile: 'default', client, manager, limit: 50, signal: new AbortController().signal, now: Date.now() + later });
  } finally {
    await Promise.all([client.close(), manager?.close()]);
  }
}

/** The line's checks, from the kill to a settled line: said waiting within the hour, settled at the charge after it. */
async function settles(svc: Service, state: string, model: string): Promise<void> {
  const { line, charged, env } = await killedBeforeNamed(svc, state, model);
  // Before: `"endpoint": "unknown"` and no id, counted at its bound for ever.
  expect(line).toMatchObject({ endpoint: 'unknown', id: expect.stringMatching(/^held-[0-9a-f]{16}$/), key_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(Date.parse(line.sent_after!)).toBeLessThanOrEqual(Date.parse(line.sent_before!));
  expect(line.cost).toBeGreaterThan(charged);
  // Within the hour it waits (the service may not have counted the call yet), and says so.
  const now = await runCli(['usage', '--reconcile', '--json'], { env: { ...env, ROUTER_MANAGEMENT_KEY: svc.managementKey } });
  expect(now.code, now.stderr).toBe(0);
  expect(JSON.parse(now.stdout).held).toEqual({ settled: [], waiting: [line.id], unsettled: [] });
  expect(now.stderr).toMatch(/1 call killed or lost before the service named it, settled by a run an hour after it was sent/);
  // Without a management key it cannot be: said, and left at its bound; a standard key in its place is refused (403).
  const without = await reconcileLater(svc, state, HOUR + 60_000, null);
  expect(without.report.held).toEqual({ settled: [], waiting: [], unsettled: [{ id: line.id, why: expect.stringMatching(/^no management key is set/) }] });
  const refused = await reconcileLater(svc, state, HOUR + 60_000, svc.apiKey);
  expect(refused.failure).toMatchObject({ status: 403 });
  expect(lines(state).filter((l) => l.reconciles === line.id)).toEqual([]);
  const { report } = await reconcileLater(svc, state, HOUR + 60_000);
  expect(report.held.settled).toEqual([expect.objectContaining({ id: line.id, bound: line.cost, charged })]);
  const settling = lines(state).find((l) => l.reconciles === line.id)!;
  expect(settling).toMatchObject({ real_cost: charged });
  expect(settling.cost).toBeCloseTo(charged - line.cost, 10);
  // Once: a second run finds nothing left of it, and `router usage` counts it at its charge, no longer at its bound.
  expect((await reconcileLater(svc, state, HOUR + 60_000)).report.held).toEqual({ settled: [], waiting: [], unsettled: [] });
  const usage = await runCli(['usage', '--json'], { env });
  expect(usage.stderr).not.toMatch(/damaged/);
  expect(JSON.parse(usage.stdout).unsettled).toEqual({ calls: 0, cost: 0 });
}

describe.each(['spec', 'deployed'] as const)('a call killed before its answer named it, `router serve --flavor %s`', (flavor) => {
  let t: TestEnv;
  afterAll(() => t?.close());

  it('fake models: the slowed answer was never charged, and the line is settled at nothing', async () => {
    t = await startTestEnv({ flavor });
    await t.admin('faults', { faults: ['slow,delay_ms=600000,path=/chat/completions,times=1'] });
    const svc: Service = { root: t.apiRoot, apiKey: t.apiKey, managementKey: t.managementKey, used: () => usedOf(t.apiRoot, t.managementKey), asked: () => t.requests().filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length, ended: async (usedBefore) => (await svc.used()) === usedBefore };
    await settles(svc, join(t.dir, 'killed-slow'), 'local/lorem');
  });
});

describe.each(['spec', 'deployed'] as const)('a call killed before its answer named it, a `router serve --flavor %s` gateway', (flavor) => {
  const dir = mkdtempSync(join(tmpdir(), 'router-held-'));
  let upstream: Emulator;
  let g: Serve | undefined;
  afterAll(async () => {
    if (g && g.child.exitCode === null) g.child.kill('SIGKILL');
    await g?.exited;
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the whole answer is read to its end and charged after the kill: the line is settled at that charge', async () => {
    upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
    const providers = join(dir, 'providers.yaml');
    writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem }, prices: { test/m: { prompt: 0.000001, completion: 0.000002 } } }\n`);
    const up = upstream.store.firstKeys();
    const faults = await fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${up.managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['slow,delay_ms=1500,times=1,path=/v1/chat/completions'] }) });
    expect(faults.status).toBe(200);
    g = await spawnServe(['--state', join(dir, 'gateway'), '--providers', providers, '--flavor', flavor], { UP_KEY: up.apiKey });
    const info = g.info;
    const svc: Service = { root: info.api_root, apiKey: info.api_key, managementKey: info.management_key, used: () => usedOf(info.api_root, info.management_key), asked: () => upstream.requestLog.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length, ended: async (_, keyBefore) => (await keyUsage(info.api_root, info.api_key)) > keyBefore };
    await settles(svc, join(dir, 'cli'), 'test/m');
  });
});

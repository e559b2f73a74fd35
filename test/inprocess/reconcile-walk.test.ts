import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// usage --reconcile over more calls than --limit, some the service does not know (task c8): each run walks on.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('three runs at --limit 50 settle all 60 known of 120 calls, each call asked once in a state it cannot leave', async () => {
  const state = join(t.dir, 'state-reconcile-walk');
  mkdirSync(state, { recursive: true });
  const env = { ROUTER_STATE_DIR: state };
  const line = (id: string, agoMs: number) => JSON.stringify({ time: new Date(Date.now() - agoMs).toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', id, cost: 0 });
  const gone = Array.from({ length: 40 }, (_, i) => `gen-gone-${i}`);
  const late = Array.from({ length: 20 }, (_, i) => `gen-late-${i}`);
  for (let i = 0; i < 60; i++) expect((await run(['chat', '--model', 'local/echo', `call ${i}`], env)).code).toBe(0);
  // First in the ledger: 40 calls of half an hour ago this server never made (a reset emulator's), 20 of a minute
  // ago it does not know yet; then the 60 it knows. Put in front once the 60 are made: a late call is one made less
  // than 2 minutes before the newest the service knows (KNOWN_LATER_MS), and at load the 60 took past a minute
  // (the late ones, dated before them, were taken for gone).
  const known = readFileSync(join(state, 'usage.jsonl'), 'utf8');
  writeFileSync(join(state, 'usage.jsonl'), [...gone.map((id) => line(id, 30 * 60_000)), ...late.map((id) => line(id, 60_000))].join('\n') + '\n' + known);
  t.clearRequests();
  const reports = [];
  const said: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await run(['usage', '--reconcile', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    reports.push(JSON.parse(r.stdout));
    said.push(r.stderr);
  }
  // Was: each run asked the same 50 (40 gone, 10 late: "not known yet"), and none of the 60 known was ever reached.
  expect(reports.map((r) => r.reconciled.length)).toEqual([0, 40, 20]);
  expect(reports.flatMap((r) => r.unknown_here).sort()).toEqual([...gone].sort());
  expect(reports[2]).toMatchObject({ pending: [], left: 0 });
  expect(reports[2].waiting.sort()).toEqual([...late].sort());
  // The run that asked the late ones says when they are asked again.
  expect(reports[1].pending.sort()).toEqual([...late.slice(10)].sort());
  expect(said[1]).toMatch(/; 10 not known to the service yet \(asked again in 5 minutes\); 10 calls not known to the service when asked in the last 5 minutes, not asked again before; 20 left: run router usage --reconcile again\n$/);
  const asks = new Map<string, number>();
  for (const q of t.requests().filter((q) => /\/v1\/generation$/.test(q.path))) asks.set(q.query.id![0]!, (asks.get(q.query.id![0]!) ?? 0) + 1);
  expect(asks.size).toBe(120);
  expect([...asks.values()].every((n) => n === 1)).toBe(true);
  // A fourth run asks nothing: the late ones wait their five minutes.
  t.clearRequests();
  const fourth = await run(['usage', '--reconcile'], env);
  expect(fourth.stderr).toBe('reconciled 0 calls of profile "default"; 20 calls not known to the service when asked in the last 5 minutes, not asked again before; none left\n');
  expect(t.requests().filter((q) => /\/v1\/generation$/.test(q.path))).toEqual([]);
});

it('two runs at once write one line a call: none refused as damaged after', async () => {
  const state = join(t.dir, 'state-reconcile-twice');
  mkdirSync(state, { recursive: true });
  const env = { ROUTER_STATE_DIR: state };
  for (let i = 0; i < 12; i++) expect((await run(['chat', '--model', 'local/echo', `call ${i}`], env)).code).toBe(0);
  // Counted above what they cost (as a killed call's bound is): each run's line takes the cost down.
  const ledger = join(state, 'usage.jsonl');
  const calls = readFileSync(ledger, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; cost: number });
  writeFileSync(ledger, calls.map((c) => JSON.stringify({ ...c, cost: c.cost + 0.001 })).join('\n') + '\n');
  const both = await Promise.all([run(['usage', '--reconcile', '--json'], env), run(['usage', '--reconcile', '--json'], env)]);
  for (const r of both) expect(r.code, r.stderr).toBe(0);
  expect(both.map((r) => (JSON.parse(r.stdout) as { reconciled: unknown[] }).reconciled.length).sort()).toEqual([0, 12]);
  const lines = readFileSync(ledger, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { reconciles?: string });
  expect(lines.filter((l) => l.reconciles).map((l) => l.reconciles).sort()).toEqual(calls.map((c) => c.id).sort());
  const after = await run(['usage', '--json'], env);
  expect(after.stderr).not.toMatch(/damaged/);
  expect(JSON.parse(after.stdout).total.cost).toBeCloseTo(calls.reduce((sum, c) => sum + c.cost, 0), 9);
});

/**
 * `router usage --reconcile` killed -9 between its ledger writes, and two runs at once on one state: a kept send settled by
 * its key's spend (a budgeted `batch create` whose answer was lost) and chat calls reconciled by `GET /generation`. A second
 * run finishes the work: each call reconciled once, the send settled once, no line lost or doubled, the ledger's total what the
 * service charged the key, nothing left locked. Spawned: only a process shows a kill -9; the runs' clocks 27 hours ahead
 * (test/support/clock-ahead.cjs), past the batch's window; each lookup slowed, so that a kill lands between two writes.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { startTestEnv } from '../helpers.js';
import { waitForState } from '../support/until.js';
import { closedStatus, killedNine } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

type Line = { id?: string; cost?: number; reconciles?: string; command?: string; endpoint?: string };
const HOUR = 3600_000;
const ended = (b: { status: string }) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);
const CHATS = 2;

describe.each(FLAVORS)('usage --reconcile killed or run twice at once (%s flavour)', (flavor) => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5, flavor }));

  const ledger = (s: Space) => (existsSync(join(s.state, 'usage.jsonl')) ? readFileSync(join(s.state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line) : []);
  const keyUsed = async (s: Space) => ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${s.key}` } })).json()) as { data: { usage: number } }).data.usage;
  const envOf = (s: Space) => ({ ...s.env, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: s.management });
  const ahead = (s: Space) => ({ ...envOf(s), NODE_OPTIONS: `--require ${join(import.meta.dirname, '../support/clock-ahead.cjs')}`, ROUTER_TEST_CLOCK_AHEAD_MS: String(27 * HOUR) });
  const SLOW = ['slow,delay_ms=400,path=/generation,method=GET', 'slow,delay_ms=400,path=/analytics'];

  /** A kept send (its create's answer lost, its batch ended) and CHATS calls after it, all still to reconcile. */
  async function toSettle(name: string): Promise<Space> {
    const s = await newSpace(t, `rk-${name}-${flavor}`);
    const file = requestsFile(t.dir, `rk-${name}-${flavor}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    await setFaults(t, s, [`lost,times=1,path=${batchesPathOf(flavor)},method=POST`, ...(flavor === 'spec' ? ['400,path=/v1/batches,method=GET'] : [])]);
    expect((await t.run(['batch', 'create', file, '--model', 'local/echo'], { env: envOf(s) })).code).not.toBe(0);
    await setFaults(t, s, []);
    await waitForState(async () => (await batchesOf(t, s)).every(ended), 'the batch to end');
    for (let i = 0; i < CHATS; i++) expect((await t.run(['chat', '--model', 'local/echo', '--max-tokens', '5', `hi ${i}`], { env: envOf(s) })).code).toBe(0);
    return s;
  }

  /** Each call reconciled once, the send settled once, the ledger's total what the key was charged, its hold at $0. */
  async function settledOnce(s: Space, chats = CHATS) {
    const lines = ledger(s);
    const calls = lines.filter((l) => l.endpoint === '/v1/chat/completions' && !l.reconciles);
    expect(calls).toHaveLength(chats);
    for (const c of calls) expect(lines.filter((l) => l.reconciles === c.id)).toHaveLength(1);
    expect(lines.filter((l) => l.command === 'usage --reconcile' && l.endpoint === '/v1/batches')).toHaveLength(1);
    expect(lines.reduce((sum, l) => sum + (l.cost ?? 0), 0)).toBeCloseTo(await keyUsed(s), 9);
    const holds = readdirSync(join(s.state, 'budget-holds')).filter((n) => n.endsWith('.json'));
    expect(holds.map((n) => JSON.parse(readFileSync(join(s.state, 'budget-holds', n), 'utf8')).usd)).toEqual([0]);
    // Nothing left to do, nothing locked: a third run finds nothing and ends.
    const r = await t.run(['usage', '--reconcile', '--json'], { env: ahead(s) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ checked: 0, reconciled: [], sent: { settled: [] } });
    expect(ledger(s)).toHaveLength(lines.length);
  }

  // The writes of one run: a line for each call, then the send's settling.
  for (const writes of Array.from({ length: CHATS }, (_, i) => i + 1)) {
    it(`killed -9 after ${writes} of its writes, a second run settles the rest once`, async () => {
      const s = await toSettle(`kill${writes}`);
      const before = ledger(s).length;
      await setFaults(t, s, SLOW);
      const child = t.spawn(['usage', '--reconcile', '--json'], ahead(s));
      await waitForState(() => ledger(s).length >= before + writes, `${writes} lines written`);
      await killedNine(child);
      await setFaults(t, s, []);
      expect(ledger(s).length).toBeLessThan(before + CHATS + 1);
      const r = await t.run(['usage', '--reconcile', '--json'], { env: ahead(s) });
      expect(r.code, r.stderr).toBe(0);
      await settledOnce(s);
    });
  }

  it('two runs at once: one waits for the other, each hold settled once', async () => {
    const s = await toSettle('twice');
    await setFaults(t, s, SLOW);
    const runs = [t.spawn(['usage', '--reconcile', '--json'], ahead(s)), t.spawn(['usage', '--reconcile', '--json'], ahead(s))];
    expect(await Promise.all(runs.map((c) => closedStatus(c)))).toEqual([0, 0]);
    await setFaults(t, s, []);
    await settledOnce(s);
  });

  it('beside a budgeted chat writing the ledger: both lines kept, each hold settled once', async () => {
    const s = await toSettle('beside');
    const before = ledger(s).length;
    await setFaults(t, s, SLOW);
    const run = t.spawn(['usage', '--reconcile', '--json'], ahead(s));
    await waitForState(() => ledger(s).length > before, 'a line written');
    const chat = await t.run(['chat', '--model', 'local/echo', '--max-tokens', '5', 'beside'], { env: envOf(s) });
    expect(chat.code, chat.stderr).toBe(0);
    expect(await closedStatus(run)).toBe(0);
    await setFaults(t, s, []);
    // The chat's call, written after the run read the ledger, is the next run's to reconcile.
    expect((await t.run(['usage', '--reconcile'], { env: ahead(s) })).code).toBe(0);
    await settledOnce(s, CHATS + 1);
  });
});

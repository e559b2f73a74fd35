import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { keyUsed, later } from '../support/spend-later.js';

// A kept send (a budgeted `batch create` whose answer was lost) settled by its key's spend while its create record could still
// join it keeps a $0 hold naming that settling, which a later join takes back. That hold went at 48 hours from the settling: a
// batch joined later (a `batch get`) was counted beside the settling, twice. It now lasts as long as the record can join it.
// A run killed -9 after the settling's line, before the hold was rewritten, left the hold at its bound: the next run settled it
// again, its hold naming only that second settling, so a join took back only that one. Now the next run keeps the first.

afterEach(() => vi.useRealTimers());

const ended = (b: { status: string }) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);
const HOUR = 3600_000;

describe.each(FLAVORS)('%s flavour: a kept send settled by spend, its record still there', (flavor) => {
  let t!: CliEnv;
  const router = cliEnvPerFile((e) => (t = e), { flavor, batchDelayMs: 5 });

  /** A lost create's kept send, its batch ended and settled by spend at 27 h. */
  async function settledSend(prefix: string, faults: string[]) {
    const s: Space = await newSpace(t, `${prefix}-${flavor}`);
    const env = { ...s.env, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: s.management };
    const file = requestsFile(t.dir, `${prefix}-${flavor}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    await setFaults(t, s, [`lost,times=1,path=${batchesPathOf(flavor)},method=POST`, ...faults]);
    expect((await router(['batch', 'create', file, '--model', 'local/echo'], env)).code).not.toBe(0);
    await setFaults(t, s, []);
    const holds = () => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'));
    const [name] = holds();
    expect(name).toMatch(/^batch-sent-/);
    while ((await batchesOf(t, s)).some((b) => !ended(b))) await new Promise((r) => setTimeout(r, 20));
    const [batch] = await batchesOf(t, s);
    const spent = await keyUsed(t, s.key);
    expect(spent).toBeGreaterThan(0);
    const holdPath = join(s.state, 'budget-holds', name!);
    const unsettled = readFileSync(holdPath, 'utf8');
    const r = await later(27 * HOUR, () => router(['usage', '--reconcile', '--json'], env));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).sent.settled).toMatchObject([{ id: name!.slice(0, -'.json'.length) }]);
    expect(JSON.parse(readFileSync(join(s.state, 'budget-holds', name!), 'utf8'))).toMatchObject({ usd: 0, settled_send: expect.anything() });
    const total = async (at: number) => JSON.parse((await later(at, () => router(['usage', '--json', '--since', '30d'], env))).stdout).total.cost as number;
    return { s, env, name: name!, holds, batch, spent, total, holdPath, unsettled };
  }

  it('keeps its $0 hold past 48 hours: a batch get three days on joins it, counted once', async () => {
    const k = await settledSend('rejoin-late', flavor === 'spec' ? ['400,path=/v1/batches,method=GET'] : []);
    // 49 hours after the settling (the kit's reconcile at that `now`): before, the hold was let go as stale here.
    const r = await later(76 * HOUR, () => router(['usage', '--reconcile', '--json'], k.env));
    expect(r.code, r.stderr).toBe(0);
    expect(k.holds()).toEqual([k.name]);
    expect(await k.total(76 * HOUR)).toBeCloseTo(k.spent, 9);

    const got = await later(76 * HOUR, () => router(['batch', 'get', k.batch.id, '--json'], k.env));
    expect(got.code, got.stderr).toBe(0);
    expect(k.holds()).toEqual([]);
    // Once: the batch's own cost, the settling taken back (before: both, the key's spend counted twice).
    expect(await k.total(76 * HOUR)).toBeCloseTo(JSON.parse(got.stdout).usage.cost, 9);
    expect(await k.total(76 * HOUR)).toBeCloseTo(k.spent, 9);
  });

  it('settled by a run killed before its hold was rewritten: the next run keeps that settling, a join takes it back, once', async () => {
    const k = await settledSend('rejoin-killed', flavor === 'spec' ? ['400,path=/v1/batches,method=GET'] : []);
    const settling = () => readFileSync(join(k.s.state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.command === 'usage --reconcile');
    expect(settling()).toHaveLength(1);
    // What a kill -9 between the settling's line and the hold's rewrite leaves: the line, and the hold at its bound.
    writeFileSync(k.holdPath, k.unsettled);
    const r = await later(28 * HOUR, () => router(['usage', '--reconcile', '--json'], k.env));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).sent.settled).toEqual([]);
    expect(settling()).toHaveLength(1);
    expect(JSON.parse(readFileSync(k.holdPath, 'utf8'))).toMatchObject({ usd: 0, settled_send: { line: { id: settling()[0].id, cost: settling()[0].cost } } });
    const got = await later(28 * HOUR, () => router(['batch', 'get', k.batch.id, '--json'], k.env));
    expect(got.code, got.stderr).toBe(0);
    expect(k.holds()).toEqual([]);
    expect(await k.total(28 * HOUR)).toBeCloseTo(k.spent, 9);
  });
});

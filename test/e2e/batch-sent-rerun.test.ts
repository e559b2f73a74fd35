/**
 * A budgeted `batch create` killed -9 after the service made its batch keeps its hold (`batch-sent-…`); `usage --reconcile`
 * settles it by the key's spend once the batch window passed, its record still there: the hold kept at $0 naming that settling.
 * The create run again then finds its batch in the listing (settleUnheard): the settling is taken back and the hold is the batch's
 * again, its cost counted once when recorded. On the deployed service (no listing) the rerun is refused and changes nothing.
 * Spawned: only a process shows a kill -9; the settling is the kit's reconcile at a `now` past the window.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { startTestEnv } from '../helpers.js';
import { waitForState } from '../support/until.js';
import { killedNine } from '../support/run-process.js';
import { RouterClient } from '../../src/client/index.js';
import { reconcile } from '../../src/kit/spend/reconcile.js';
import { startedForAll } from '../support/for-all.js';

const BUDGET = { ROUTER_DAILY_BUDGET: '5' };
const HOUR = 3600_000;
const ended = (b: { status: string }) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);

describe.each(FLAVORS)('a settled kept send, its create run again (%s flavour)', (flavor) => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5, flavor }));

  const holdsOf = (s: Space) => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'));
  const holdOf = (s: Space, name: string) => JSON.parse(readFileSync(join(s.state, 'budget-holds', name), 'utf8')) as { usd: number; settled_send?: unknown };
  const ledgerTotal = (s: Space) => readFileSync(join(s.state, 'usage.jsonl'), 'utf8').trim().split('\n').reduce((sum, l) => sum + ((JSON.parse(l) as { cost?: number }).cost ?? 0), 0);
  const keyUsed = async (s: Space) => ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${s.key}` } })).json()) as { data: { usage: number } }).data.usage;

  async function reconciledAt(s: Space, later: number) {
    const client = new RouterClient({ apiKey: s.key, apiRoot: t.apiRoot });
    const manager = new RouterClient({ apiKey: s.management, apiRoot: t.apiRoot });
    try {
      const { report, failure } = await reconcile({ env: { ROUTER_STATE_DIR: s.state }, profile: 'default', client, manager, limit: 50, signal: new AbortController().signal, now: Date.now() + later });
      expect(failure).toBeUndefined();
      return report;
    } finally {
      await Promise.all([client.close(), manager.close()]);
    }
  }

  it('takes the settling back where it finds the batch; the batch is counted once', async () => {
    const s = await newSpace(t, `rerun-${flavor}`);
    const env = { ...s.env, ...BUDGET };
    const file = requestsFile(t.dir, `${flavor}-rerun.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    const create = ['batch', 'create', file, '--model', 'local/echo'];
    await setFaults(t, s, [`held,times=1,path=${batchesPathOf(flavor)},method=POST`]);
    const child = t.spawn(create, env);
    await waitForState(async () => (await batchesOf(t, s)).length === 1, 'the batch to be made');
    await killedNine(child);
    await setFaults(t, s, []);
    await waitForState(async () => (await batchesOf(t, s)).every(ended), 'the batch to end');
    const made = (await batchesOf(t, s))[0].id as string;
    const spent = await keyUsed(s);
    expect(spent).toBeGreaterThan(0);

    const settled = await reconciledAt(s, 27 * HOUR);
    expect(settled.sent.settled).toHaveLength(1);
    const [name] = holdsOf(s);
    expect(name).toMatch(/^batch-sent-/);
    expect(holdOf(s, name!)).toMatchObject({ usd: 0, settled_send: expect.anything() });
    expect(ledgerTotal(s)).toBeCloseTo(settled.sent.settled[0]!.charged, 9);

    const rerun = await t.run(create, { env });
    expect(await batchesOf(t, s)).toHaveLength(1);
    if (flavor === 'spec') {
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stdout).toContain(made);
      // The batch's hold again, at its bound; the settling reconciled to 0 in the ledger.
      expect(holdsOf(s)).toEqual([`batch-${made}.json`]);
      expect(holdOf(s, `batch-${made}.json`).usd).toBeGreaterThan(0);
      expect(ledgerTotal(s)).toBeCloseTo(0, 9);
    } else {
      // No listing to find it by: refused, nothing sent, the settling and its $0 hold as they were.
      expect(rerun.code, rerun.stderr).toBe(8);
      expect(holdsOf(s)).toEqual([name]);
      expect(holdOf(s, name!)).toMatchObject({ usd: 0, settled_send: expect.anything() });
      expect(ledgerTotal(s)).toBeCloseTo(settled.sent.settled[0]!.charged, 9);
    }
    const got = await t.run(['batch', 'get', made, '--json'], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(holdsOf(s)).toEqual([]);
    expect(ledgerTotal(s)).toBeCloseTo(spent, 9);
    // Not settled again.
    expect((await reconciledAt(s, 30 * HOUR)).sent.settled).toEqual([]);
    expect(ledgerTotal(s)).toBeCloseTo(spent, 9);
  });
});

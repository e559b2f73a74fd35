import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { startCliEnv } from '../support/cli-env.js';
import { RouterClient } from '../../src/client/index.js';
import { reconcile } from '../../src/kit/spend/reconcile.js';
import { startedForAll } from '../support/for-all.js';

// A budgeted `batch create` whose answer was lost after the service made its batch keeps its bound held (`batch-sent-…`): the
// batch may exist. Sent again with --new, its create record is gone, so nothing joins that hold to a batch any more: before,
// it stood at its bound for 48 hours. `usage --reconcile` now settles it by the key's spend over the batch's window, once that
// window and the hour after it have passed (never while money may still be charged), never above the bound.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startCliEnv({ flavor, batchDelayMs: 5 }));

  async function reconciled(s: Space, later: number, manager = true) {
    const client = new RouterClient({ apiKey: s.key, apiRoot: t.apiRoot });
    const mgr = manager ? new RouterClient({ apiKey: s.management, apiRoot: t.apiRoot }) : undefined;
    try {
      const { report, failure } = await reconcile({ env: { ROUTER_STATE_DIR: s.state }, profile: 'default', client, manager: mgr, limit: 50, signal: new AbortController().signal, now: Date.now() + later });
      expect(failure).toBeUndefined();
      return report;
    } finally {
      await Promise.all([client.close(), mgr?.close()]);
    }
  }
  const keyUsed = async (s: Space) => ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${s.key}` } })).json()) as { data: { usage: number } }).data.usage;

  it('a kept send whose record is gone (--new) is settled by the key\'s spend after the batch window, at most its bound', async () => {
    const s = await newSpace(t, `sent-settle-${flavor}`);
    const env = { ...s.env, ROUTER_DAILY_BUDGET: '5' };
    const holds = () => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-sent-'));
    const file = requestsFile(t.dir, `sent-settle-${flavor}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    const before = await keyUsed(s);
    // The answer lost after the batch was made, and (spec) the listing it would be found by failing: its send is kept unanswered.
    await setFaults(t, s, [`lost,times=1,path=${batchesPathOf(flavor)},method=POST`, ...(flavor === 'spec' ? ['400,path=/v1/batches,method=GET'] : [])]);
    const lost = await t.run(['batch', 'create', file, '--model', 'local/echo'], { env });
    expect(lost.code, lost.stderr).not.toBe(0);
    await setFaults(t, s, []);
    expect(holds()).toHaveLength(1);
    const [name] = holds();
    const bound = JSON.parse(readFileSync(join(s.state, 'budget-holds', name!), 'utf8')).usd as number;
    expect(bound).toBeGreaterThan(0);
    const again = await t.run(['batch', 'create', file, '--model', 'local/echo', '--new'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(await batchesOf(t, s)).toHaveLength(2);
    // Both batches run to their end (the lost one is never looked at: nothing records its cost).
    while ((await batchesOf(t, s)).some((b) => !['completed', 'failed', 'expired', 'cancelled'].includes(b.status))) await new Promise((r) => setTimeout(r, 20));
    const spent = (await keyUsed(s)) - before;
    expect(spent).toBeGreaterThan(0);
    // Still held: the record that could join it is gone.
    expect(holds()).toEqual([name]);

    const id = name!.slice(0, -'.json'.length);
    // Within the batch's window and the hour after it: money may still be charged, it waits.
    for (const later of [0, 25 * 3600_000]) {
      const r = await reconciled(s, later);
      expect(r.sent.waiting).toEqual([id]);
      expect(holds()).toEqual([name]);
    }
    expect((await reconciled(s, 27 * 3600_000, false)).sent.unsettled).toMatchObject([{ id, why: expect.stringMatching(/no management key/) }]);
    const settled = await reconciled(s, 27 * 3600_000);
    expect(settled.sent.settled).toMatchObject([{ id, bound }]);
    // Over, never under: what the key spent in the window (both batches here), never above the bound.
    expect(settled.sent.settled[0]!.charged).toBeCloseTo(Math.min(bound, spent), 9);
    expect(holds()).toEqual([]);
    const ledger = readFileSync(join(s.state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(ledger.filter((l) => l.command === 'usage --reconcile')).toMatchObject([{ endpoint: '/v1/batches', cost: settled.sent.settled[0]!.charged }]);
    // Once: a later run finds nothing of it.
    expect((await reconciled(s, 27 * 3600_000)).sent.settled).toEqual([]);
    expect(existsSync(join(s.state, 'budget-holds', name!))).toBe(false);
  });
});

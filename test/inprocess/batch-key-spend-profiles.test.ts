import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newSpace, requestsFile } from '../support/batch-jobs.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { keyUsed, later } from '../support/spend-later.js';

// Two profiles with one key, each with a batch that ended naming no cost in overlapping windows: a reconcile of one
// profile must leave the other's batch its share of the key's spend, and both profiles together count it once.

afterEach(() => vi.useRealTimers());


describe('deployed flavour: two profiles of one key, a batch each that ended naming no cost', () => {
  let t!: CliEnv;
  const router = cliEnvPerFile((e) => (t = e), { flavor: 'deployed', batchDelayMs: 60_000 });

  it("are settled together by either profile's run, each at its share, each profile's usage its own", async () => {
    await t.admin('batches', { delay_ms: 300 });
    const s = await newSpace(t, 'two-profiles');
    const base = { ...s.env, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: s.management };
    const envOf = (p: string) => ({ ...base, ROUTER_PROFILE: p });
    for (const p of ['a', 'b']) expect((await router(['config', 'set', 'model', 'local/lorem', '--profile', p], base)).code).toBe(0);
    const ids: string[] = [];
    for (const p of ['a', 'b']) {
      const file = requestsFile(t.dir, `two-profiles-${p}.jsonl`, 4, (i) => ({ messages: [{ role: 'user', content: `write 500 words, ${p}.${i}` }], max_tokens: 200 }));
      const made = await router(['batch', 'create', file, '--model', 'local/lorem'], envOf(p));
      expect(made.code, made.stderr).toBe(0);
      ids.push(made.stdout.trim());
    }
    const shown = async (id: string, p: string) => JSON.parse((await router(['batch', 'get', id, '--json'], envOf(p))).stdout);
    for (const [i, id] of ids.entries()) while ((await shown(id, ['a', 'b'][i]!)).request_counts.completed < 1);
    await t.admin('batches', { delay_ms: 60_000 });
    await t.admin('clock', { advance_seconds: 25 * 3600 });
    const completed: number[] = [];
    for (const [i, id] of ids.entries()) {
      const b = await shown(id, ['a', 'b'][i]!);
      expect(b).toMatchObject({ status: 'expired', usage: null });
      completed.push(b.request_counts.completed);
    }
    const spent = await keyUsed(t, s.key);
    expect(spent).toBeGreaterThan(0);

    // Before: profile a's run charged its batch the key's whole spend, and b's got nothing (below what it cost).
    const r = await later(2 * 3600_000, () => router(['usage', '--reconcile', '--json'], envOf('a')));
    expect(r.code, r.stderr).toBe(0);
    const settled = JSON.parse(r.stdout).batches.settled as { id: string; charged: number }[];
    expect(settled.map((x) => x.id).sort()).toEqual([...ids].sort());
    const share = (i: number) => (spent * completed[i]!) / (completed[0]! + completed[1]!);
    for (const [i, id] of ids.entries()) expect(settled.find((x) => x.id === id)!.charged).toBeCloseTo(share(i), 9);
    const again = await later(2 * 3600_000, () => router(['usage', '--reconcile', '--json'], envOf('b')));
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).batches.settled).toEqual([]);
    // The ledger counts the key's spend once over both profiles; each profile's budget its own batch's share.
    for (const [i, p] of ['a', 'b'].entries()) {
      const u = await router(['usage', '--json', '--since', '1d'], envOf(p));
      expect(u.code, u.stderr).toBe(0);
      const usage = JSON.parse(u.stdout);
      expect(usage.total.cost).toBeCloseTo(spent, 9);
      expect(usage.budgets[0]).toMatchObject({ profile: p, unrecorded: 0 });
      expect(usage.budgets[0].spent).toBeCloseTo(share(i), 9);
    }
    expect(readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'))).toEqual([]);
  });
});

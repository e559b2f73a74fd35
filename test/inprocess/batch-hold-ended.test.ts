import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAVORS } from '../support/batch-jobs.js';
import { startCliEnv } from '../support/cli-env.js';
import { RouterClient } from '../../src/client/index.js';
import { reconcile } from '../../src/kit/spend/reconcile.js';
import { startedForAll } from '../support/for-all.js';

// A batch that ends without completing (expired here; failed and cancelled end the same way) is settled in the
// ledger by what the service says it charged, so its budget hold goes. Before: the deployed service's usage is
// null for such a batch, the ledger line had no cost, and the hold kept the budget lowered for 48 hours by money
// never spent (the next batch refused, exit 4).
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startCliEnv({ flavor, batchDelayMs: 60_000 }));

  let n = 0;
  function requestsFile(): string {
    const path = join(t.dir, `requests-${++n}.jsonl`);
    writeFileSync(path, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `write 500 words, ${n}` }], max_tokens: 200 } })).join('\n') + '\n');
    return path;
  }
  const ledger = (state: string) => readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const holdOf = (state: string, id: string) => join(state, 'budget-holds', `batch-${id}.json`);
  const shown = async (id: string) => {
    const r = await t.run(['batch', 'get', id, '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };

  /** The kit's reconcile as `router usage --reconcile` runs it, `later` ms from now, with the management key (unless `manager` is false). */
  async function reconciled(state: string, later: number, manager = true) {
    const client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot });
    const mgr = manager ? new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot }) : undefined;
    try {
      const { report, failure } = await reconcile({ env: { ROUTER_STATE_DIR: state }, profile: 'default', client, manager: mgr, limit: 50, signal: new AbortController().signal, now: Date.now() + later });
      expect(failure).toBeUndefined();
      return report;
    } finally {
      await Promise.all([client.close(), mgr?.close()]);
    }
  }

  async function boundOf(file: string): Promise<number> {
    const r = await t.run(['batch', 'create', file, '--model', 'local/lorem', '--dry-run']);
    const m = /at most \$([\d.]+)/.exec(r.stdout + r.stderr);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    return Number(m![1]);
  }

  /** A requests file and a state folder `name` whose daily budget fits one batch of it, not two (1.5 times its bound). */
  async function budgeted(name: string): Promise<{ file: string; state: string; env: Record<string, string> }> {
    const file = requestsFile();
    const state = join(t.dir, name);
    return { file, state, env: { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: String((await boundOf(file)) * 1.5) } };
  }

  // First in its flavour: the emulator's clock is only moved forward (by the tests after it), and its deployed case settles by
  // the key's spend over the hours this machine's clock names, the emulator's alike only until its clock is moved.
  it('a batch that expired after some requests completed: settled at their cost where the service says it, else still held', async () => {
    await t.admin('batches', { delay_ms: 300 });
    const { file, state, env } = await budgeted('state-some');
    const usedBefore = ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { data: { usage: number } }).data.usage;
    const made = await t.run(['batch', 'create', file, '--model', 'local/lorem'], { env });
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    // Its requests are answered one each 300 ms, four at once at most: the clock is moved once one is.
    let b = await shown(id);
    while (b.request_counts.completed < 1) b = await shown(id);
    await t.admin('batches', { delay_ms: 60_000 });
    await t.admin('clock', { advance_seconds: 25 * 3600 });
    b = await shown(id);
    expect(b.status).toBe('expired');
    expect(b.request_counts.completed).toBeGreaterThan(0);
    const got = await t.run(['batch', 'get', id], { env });
    expect(got.code, got.stderr).toBe(0);
    const lines = ledger(state).filter((l) => l.batch_id === id);
    expect(lines).toHaveLength(1);
    if (flavor === 'spec') {
      // The service says what it charged for the completed requests: that is the ledger's cost, the hold gone.
      expect(b.usage.cost).toBeGreaterThan(0);
      expect(lines[0].cost).toBe(b.usage.cost);
      expect(existsSync(holdOf(state, id))).toBe(false);
    } else {
      // Nothing says what the completed requests cost (usage and results null): the bound stays held.
      expect(b.usage).toBeNull();
      expect(lines[0].cost).toBeUndefined();
      expect(existsSync(holdOf(state, id))).toBe(true);
      expect(got.stderr).toBe(`note: ${id} ended expired and the service names no cost for its completed requests: its bound stays held against the budgets, until router usage --reconcile settles it by its key's spend (a management key, an hour from now), or for 48 hours after it was made\n`);

      // usage --reconcile: within the hour, it waits; after, settled by the key's spend since the send (nothing else was
      // charged on the key then): exactly what the completed requests were charged, never less, and the hold goes.
      const bound = JSON.parse(readFileSync(holdOf(state, id), 'utf8')).usd as number;
      const keyUsed = async () => ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { data: { usage: number } }).data.usage;
      const charged = (await keyUsed()) - usedBefore;
      expect(charged).toBeGreaterThan(0);
      const soon = await reconciled(state, 0);
      expect(soon.batches.waiting).toEqual([id]);
      expect(existsSync(holdOf(state, id))).toBe(true);
      const none = await reconciled(state, 2 * 3600_000, false);
      expect(none.batches.unsettled).toMatchObject([{ id, why: expect.stringMatching(/no management key/) }]);
      const later = await reconciled(state, 2 * 3600_000);
      expect(later.batches.settled).toMatchObject([{ id, bound }]);
      expect(later.batches.settled[0].charged).toBeCloseTo(charged, 9);
      expect(later.batches.settled[0].charged).toBeLessThanOrEqual(bound);
      expect(existsSync(holdOf(state, id))).toBe(false);
      expect(ledger(state).filter((l) => l.batch_id === id).at(-1)).toMatchObject({ cost: later.batches.settled[0].charged });
      // Settled once: a later run finds nothing of it.
      expect((await reconciled(state, 2 * 3600_000)).batches.settled).toEqual([]);
    }
  });

  it('a batch that expired with nothing completed is settled at 0: its hold goes, and the budget takes the next batch', async () => {
    await t.admin('batches', { delay_ms: 60_000 });
    const { file, state, env } = await budgeted('state-none');
    const made = await t.run(['batch', 'create', file, '--model', 'local/lorem'], { env });
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    // Under way: looked at, and still held (it may yet be charged).
    expect((await t.run(['batch', 'get', id], { env })).code).toBe(0);
    expect(existsSync(holdOf(state, id))).toBe(true);
    expect((await t.run(['batch', 'create', requestsFile(), '--model', 'local/lorem'], { env })).code).toBe(4);

    await t.admin('clock', { advance_seconds: 25 * 3600 });
    const b = await shown(id);
    expect(b).toMatchObject({ status: 'expired', request_counts: { completed: 0 } });
    expect(b.usage?.cost ?? null).toBe(flavor === 'deployed' ? null : 0);
    const got = await t.run(['batch', 'get', id], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(existsSync(holdOf(state, id))).toBe(false);
    expect(ledger(state).filter((l) => l.batch_id === id)).toMatchObject([{ cost: 0 }]);
    const next = await t.run(['batch', 'create', requestsFile(), '--model', 'local/lorem'], { env });
    expect(next.code, next.stderr).toBe(0);
  });

  it('batch run: a shard that expired with nothing completed is settled at 0 when the job is followed again', async () => {
    await t.admin('batches', { delay_ms: 60_000 });
    const { file, state, env } = await budgeted('state-run');
    const made = await t.run(['batch', 'run', file, '--model', 'local/lorem'], { env });
    expect(made.code, made.stderr).toBe(0);
    const held = () => readdirSync(join(state, 'budget-holds')).filter((f) => f.startsWith('batch-'));
    expect(held()).toHaveLength(1);
    await t.admin('clock', { advance_seconds: 25 * 3600 });
    const followed = await t.run(['batch', 'run', file, '--model', 'local/lorem', '--watch'], { env });
    expect(followed.code, followed.stderr).toBe(9);
    expect(held()).toEqual([]);
    expect(ledger(state).filter((l) => l.batch_id)).toMatchObject([{ cost: 0 }]);
  });

});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAVORS } from '../support/batch-jobs.js';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A batch that ended and whose finalized cost exceeds the balance: Get answers 402 with the batch (results null). What it
// owes is charged once credits cover it, whoever asks then. Before, `batch get` (and a watch) wrote no ledger line for it:
// its budget hold stayed until it lapsed (48 hours), and a Get made elsewhere after credits were added left the charge
// unseen by the budgets for good.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startCliEnv({ flavor }));

  let n = 0;
  function requestsFile(): string {
    const path = join(t.dir, `owed-${++n}.jsonl`);
    writeFileSync(path, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `p${i}`, body: { messages: [{ role: 'user', content: `write 200 words, ${n}` }] } })).join('\n') + '\n');
    return path;
  }
  const ledger = (state: string) => readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const holdOf = (state: string, id: string) => join(state, 'budget-holds', `batch-${id}.json`);

  // The spec's service lists batches (no 402 there): the run follows a shard by its listing. The deployed one has none: by Get.
  if (flavor === 'deployed') it('batch run --watch: a shard whose Get is answered 402 once it ended has its owed cost in the ledger, its hold gone', async () => {
    const ws = await t.admin('workspaces', { credits: 0.00002 });
    const state = join(t.dir, 'state-run');
    const env = { ROUTER_API_KEY: ws.api_key, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    const run = await t.run(['batch', 'run', requestsFile(), '--model', 'local/lorem', '--watch', '--interval', '0.05'], { env });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/finalized cost of batch_\w+ exceeds your balance/);
    const id = /(batch_\w+)/.exec(run.stderr)![1]!;
    const res = await fetch(`${t.apiRoot}${flavor === 'deployed' ? '/beta/batches' : '/v1/batches'}/${id}`, { headers: { authorization: `Bearer ${ws.api_key}` } });
    expect(res.status).toBe(402);
    const owed = (await res.json()) as { usage: { cost: number } };
    expect(owed.usage.cost).toBeGreaterThan(0);
    // Before: no line, and the shard's hold stayed for 48 hours.
    expect(ledger(state).filter((l) => l.batch_id === id)).toMatchObject([{ cost: owed.usage.cost }]);
    expect(existsSync(holdOf(state, id))).toBe(false);
  });

  for (const how of ['get', 'get --results', 'get --watch'] as const) {
    it(`batch ${how} answered 402 for an ended batch: its owed cost goes to the ledger and its hold goes; paid later, counted once`, async () => {
      const ws = await t.admin('workspaces', { credits: 0.00002 });
      const state = join(t.dir, `state-${how.replace(/\W+/g, '-')}`);
      const env = { ROUTER_API_KEY: ws.api_key, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
      const made = await t.run(['batch', 'create', requestsFile(), '--model', 'local/lorem'], { env });
      expect(made.code, made.stderr).toBe(0);
      const id = made.stdout.trim();
      expect(existsSync(holdOf(state, id))).toBe(true);
      const raw = async () => fetch(`${t.apiRoot}${flavor === 'deployed' ? '/beta/batches' : '/v1/batches'}/${id}`, { headers: { authorization: `Bearer ${ws.api_key}` } });
      let res = await raw();
      while (res.status === 200) {
        await res.arrayBuffer();
        res = await raw();
      }
      expect(res.status).toBe(402);
      const owed = (await res.json()) as { status: string; usage: { cost: number } };
      expect(owed.status).toBe('completed');
      expect(owed.usage.cost).toBeGreaterThan(0);

      const words = how.split(' ').slice(1);
      const extra = words[0] === '--results' ? ['--results', join(t.dir, `owed-${n}-out.jsonl`)] : words[0] === '--watch' ? ['--watch', '--interval', '0.05'] : [];
      const got = await t.run(['batch', 'get', id, ...extra], { env });
      expect(got.code, got.stderr).toBe(4);
      expect(got.stderr).toMatch(/finalized cost of batch_\w+ exceeds your balance/);
      expect(ledger(state).filter((l) => l.batch_id === id)).toMatchObject([{ cost: owed.usage.cost }]);
      expect(existsSync(holdOf(state, id))).toBe(false);

      await fetch(`${t.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${ws.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1 }) });
      const paid = await t.run(['batch', 'get', id], { env });
      expect(paid.code, paid.stderr).toBe(0);
      // Counted once: the day's spend is the batch's cost, not twice it.
      const usage = await t.run(['usage', '--json'], { env });
      expect(usage.code, usage.stderr).toBe(0);
      expect(JSON.parse(usage.stdout).total.cost).toBeCloseTo(owed.usage.cost, 10);
    });
  }
});

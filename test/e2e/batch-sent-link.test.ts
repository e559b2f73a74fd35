/**
 * A budgeted `batch create` killed -9 after the service made its batch, before its answer came: its hold is kept as `batch-sent-…`
 * (the batch may exist). A later command that sees that batch (`batch get`, `batch list`) joins the hold to it: the batch's cost,
 * once recorded, settles it (before, the hold stood 48 hours beside that cost: counted twice), and a rerun of the create names the
 * batch (deployed: before, refused, exit 8). Spawned: only a process shows a kill -9.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { startTestEnv } from '../helpers.js';
import { waitForState } from '../support/until.js';
import { killedNine } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const BUDGET = { ROUTER_DAILY_BUDGET: '5' };

describe.each(FLAVORS)('a killed create\'s kept hold joined to its batch when seen (%s flavour)', (flavor) => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5, flavor }));

  const create = (file: string, ...more: string[]) => ['batch', 'create', file, '--model', 'local/echo', ...more];
  const holdsOf = (s: Space) => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-')).sort();
  const ledger = (s: Space) => readFileSync(join(s.state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost?: number; batch_id?: string });
  const spentOf = async (s: Space) => (JSON.parse((await t.run(['usage', '--json'], { env: { ...s.env, ...BUDGET } })).stdout) as { budgets: { spent: number }[] }).budgets[0]!.spent;

  /** A budgeted create killed -9 once the service made its batch (its answer held), the batch still running; its hold seen kept. */
  async function killedUnanswered(name: string): Promise<{ s: Space; file: string; made: string; bound: number }> {
    const s = await newSpace(t, `link-${flavor}`);
    const file = requestsFile(t.dir, `${flavor}-${name}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    // Each request of the batch waits: it still runs when first seen.
    await t.admin('batches', { delay_ms: 1500 });
    await setFaults(t, s, [`held,times=1,path=${batchesPathOf(flavor)},method=POST`]);
    const child = t.spawn(create(file), { ...s.env, ...BUDGET });
    await waitForState(async () => (await batchesOf(t, s)).length === 1, 'the batch to be made');
    await killedNine(child);
    await setFaults(t, s, []);
    await t.admin('batches', { delay_ms: 5 });
    const made = (await batchesOf(t, s))[0].id as string;
    // `router usage` counts the dead create's hold.
    const bound = await spentOf(s);
    expect(bound).toBeGreaterThan(0);
    return { s, file, made, bound };
  }

  it('batch get: the hold becomes the batch\'s, its recorded cost settles it (counted once), a rerun names the batch', async () => {
    const { s, file, made, bound } = await killedUnanswered('get');
    const env = { ...s.env, ...BUDGET };
    // A budgeted call sees the dead create: its hold kept past it.
    expect((await t.run(['chat', '--model', 'local/echo', '--max-tokens', '1', 'hi'], { env })).code).toBe(0);
    expect(holdsOf(s)).toEqual([expect.stringMatching(/^batch-sent-/)]);

    const seen = await t.run(['batch', 'get', made, '--json'], { env });
    expect(seen.code, seen.stderr).toBe(0);
    const running = !['completed', 'failed', 'expired', 'cancelled'].includes((JSON.parse(seen.stdout) as { status: string }).status);
    // Before: `batch-sent-…` stayed whatever `batch get` saw, for 48 hours.
    expect(holdsOf(s)).toEqual(running ? [`batch-${made}.json`] : []);

    // Its create run again: it names the batch, sends nothing (deployed, before: refused, exit 8, as nothing lists it).
    const again = await t.run(create(file), { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(made);
    expect(await batchesOf(t, s)).toHaveLength(1);

    const ended = await t.run(['batch', 'get', made, '--watch', '--interval', '100ms'], { env });
    expect(ended.code, ended.stderr).toBe(0);
    expect(holdsOf(s)).toEqual([]);
    // What the ledger says was spent, each cost once (the batch's latest line): before, the bound counted on top for 48 hours.
    const lines = ledger(s);
    const batchCost = lines.filter((l) => l.batch_id === made).at(-1)!.cost!;
    const others = lines.filter((l) => !l.batch_id).reduce((sum, l) => sum + (l.cost ?? 0), 0);
    expect(batchCost).toBeGreaterThan(0);
    expect(await spentOf(s)).toBeCloseTo(batchCost + others, 9);
    expect(await spentOf(s)).toBeLessThan(bound + others);
  });

  it('kill -9 mid upload: the bound stays held while a batch may exist; a rerun that watches it counts each cost once', async () => {
    const s = await newSpace(t, `steps-${flavor}`);
    const env = { ...s.env, ...BUDGET };
    // Big enough that the upload is still going when its send is recorded (whether the service made it is the kill's timing).
    const file = requestsFile(t.dir, `${flavor}-steps.jsonl`, 200, (i) => ({ messages: [{ role: 'user', content: `step ${i} ${'x'.repeat(30_000)}` }], max_tokens: 1 }));
    const child = t.spawn(create(file), env);
    const sent = () => readdirSync(join(s.state, 'budget-holds')).some((n) => n.endsWith('.json') && readFileSync(join(s.state, 'budget-holds', n), 'utf8').includes('"sent"'));
    await waitForState(async () => { try { return sent(); } catch { return false; } }, 'the upload to be sent');
    await killedNine(child);
    const bound = await spentOf(s);
    expect(bound).toBeGreaterThan(0);
    expect((await t.run(['chat', '--model', 'local/echo', '--max-tokens', '1', 'hi'], { env })).code).toBe(0);
    expect(await spentOf(s)).toBeGreaterThanOrEqual(bound);
    const again = await t.run(create(file, '--watch', '--interval', '100ms'), { env });
    if (flavor === 'deployed') {
      // Nothing lists the batch it may have made: refused, and the bound stays held (48 hours; docs/config.md).
      expect(again.code, again.stderr).toBe(8);
      expect(holdsOf(s)).toEqual([expect.stringMatching(/^batch-sent-/)]);
      return;
    }
    expect(again.code, again.stderr).toBe(0);
    expect(await batchesOf(t, s)).toHaveLength(1);
    expect(holdsOf(s)).toEqual([]);
    const lines = ledger(s);
    const batchCost = lines.filter((l) => l.batch_id).at(-1)!.cost!;
    const others = lines.filter((l) => !l.batch_id).reduce((sum, l) => sum + (l.cost ?? 0), 0);
    expect(await spentOf(s)).toBeCloseTo(batchCost + others, 9);
  });

  if (flavor === 'spec') {
    it('batch list: the listed batch that fits the unanswered create takes its hold; one made by another create does not', async () => {
      const { s, made } = await killedUnanswered('list');
      const env = { ...s.env, ...BUDGET };
      expect((await t.run(['chat', '--model', 'local/echo', '--max-tokens', '1', 'hi'], { env })).code).toBe(0);
      expect(holdsOf(s)).toEqual([expect.stringMatching(/^batch-sent-/)]);
      // Another batch of another shape, answered: listed beside it, never taken for it.
      const other = requestsFile(t.dir, 'spec-list-other.jsonl', 2, (i) => ({ messages: [{ role: 'user', content: `other ${i}` }], max_tokens: 10 }));
      const answered = await t.run(create(other), { env });
      expect(answered.code, answered.stderr).toBe(0);
      const listed = await t.run(['batch', 'list'], { env });
      expect(listed.code, listed.stderr).toBe(0);
      // Before: the kept hold stayed `batch-sent-…` beside the answered batch's.
      expect(holdsOf(s)).toEqual([`batch-${made}.json`, `batch-${answered.stdout.trim()}.json`].sort());
    });
  }
});

describe('two budgeted creates at once near the limit', () => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5 }));

  it('the budget fits one batch\'s bound: exactly one is sent, the other refused (exit 4), nothing sent by it', async () => {
    const s = await newSpace(t, 'two-at-once');
    const files = [1, 2].map((n) => requestsFile(t.dir, `two-${n}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `file ${n} line ${i}` }], max_tokens: 50 })));
    const dry = await t.run(['batch', 'create', files[0]!, '--model', 'local/echo', '--dry-run', '--json'], { env: s.env });
    expect(dry.code, dry.stderr).toBe(0);
    const bound = (JSON.parse(dry.stdout) as { cost_bound: { bound: number } }).cost_bound.bound;
    const env = { ...s.env, ROUTER_DAILY_BUDGET: String(bound * 1.5) };
    const runs = await Promise.all(files.map((f) => t.run(['batch', 'create', f, '--model', 'local/echo'], { env })));
    expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('\n')).toEqual([0, 4]);
    expect(runs.find((r) => r.code === 4)!.stderr).toMatch(/nothing was submitted/);
    expect(await batchesOf(t, s)).toHaveLength(1);
  });
});

describe('a batch that costs more than its bound', () => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5 }));

  it('its cost is recorded once, its hold gone: the budget passed by that excess only, every later call refused', async () => {
    const s = await newSpace(t, 'over-bound');
    const file = requestsFile(t.dir, 'over-bound.jsonl', 3, (i) => ({ messages: [{ role: 'user', content: `over ${i}` }], max_tokens: 50 }));
    // The model list this machine keeps (minutes old) says prices a thousandth of what the service charges (raised since).
    expect((await t.run(['models', '--json'], { env: s.env })).code).toBe(0);
    const cache = join(s.state, 'models', readdirSync(join(s.state, 'models')).find((n) => n.endsWith('.json'))!);
    const kept = JSON.parse(readFileSync(cache, 'utf8')) as { models: { id: string; pricing: Record<string, string> }[] };
    for (const m of kept.models) for (const k of Object.keys(m.pricing ?? {})) m.pricing[k] = String(Number(m.pricing[k]) / 1e3);
    writeFileSync(cache, JSON.stringify(kept));
    const dry = await t.run(['batch', 'create', file, '--model', 'local/echo', '--dry-run', '--json'], { env: s.env });
    const held = (JSON.parse(dry.stdout) as { cost_bound: { bound: number } }).cost_bound.bound;
    const env = { ...s.env, ROUTER_DAILY_BUDGET: (held * 2).toFixed(10) };
    const made = await t.run(['batch', 'create', file, '--model', 'local/echo', '--watch', '--interval', '100ms', '--json'], { env });
    expect(made.code, made.stderr).toBe(0);
    const cost = (JSON.parse(made.stdout) as { usage: { cost: number } }).usage.cost;
    expect(cost).toBeGreaterThan(held * 2);
    expect(readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'))).toEqual([]);
    const usage = JSON.parse((await t.run(['usage', '--json'], { env })).stdout) as { budgets: { spent: number }[] };
    expect(usage.budgets[0]!.spent).toBeCloseTo(cost, 9);
    const next = await t.run(['chat', '--model', 'local/echo', '--max-tokens', '1', 'hi'], { env });
    expect(next.code, next.stderr).toBe(4);
    expect(await batchesOf(t, s)).toHaveLength(1);
  });
});

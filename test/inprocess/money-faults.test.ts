import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

// Money under faults after a call went out: a retry must not be charged twice, and a budget must count
// what the service may have charged for a call whose answer said no cost (cut, lost), until reconciled.
const t = startedForAll(() => startCliEnv());
afterEach(() => t.admin('faults', { faults: [] }));

// local/lorem at --max-tokens 200: bound $0.000354, cost $0.0003025.
const CALL = ['chat', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words'];
const posts = () => t.requests().filter((r) => r.path === '/v1/chat/completions' && r.method === 'POST').length;
let states = 0;
const freshState = () => join(t.dir, `money-faults-${++states}`);
type Line = { cost?: number; id?: string; endpoint: string; unsettled?: string; reconciles?: string; real_cost?: number };
const ledger = (state: string): Line[] => (existsSync(join(state, 'usage.jsonl')) ? readFileSync(join(state, 'usage.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line) : []);
const spent = async () => ((await (await fetch(`${t.apiRoot}/v1/credits`, { headers: { authorization: `Bearer ${t.managementKey}` } })).json()) as { data: { total_usage: number } }).data.total_usage;
const holds = (state: string) => (existsSync(join(state, 'budget-holds')) ? readdirSync(join(state, 'budget-holds')).filter((n) => n.endsWith('.json')) : []);

describe('a paid call whose answer is lost after it was carried out', () => {
  for (const stream of [true, false]) {
    it(`is not retried (${stream ? 'streamed' : '--no-stream'}): charged once, exit 8, saying why`, async () => {
      await t.admin('faults', { faults: ['lost,times=1,path=/v1/chat/completions'] });
      t.clearRequests();
      const before = await spent();
      const r = await t.run([...CALL, ...(stream ? [] : ['--no-stream'])], { env: { ROUTER_STATE_DIR: freshState() } });
      expect(r.code).toBe(8);
      expect(r.stderr).toMatch(/^error: connection to 127\.0\.0\.1:\d+ failed: .* \(not retried: the service may have carried it out, and a retry would be charged again\)\n$/);
      // Before: retried, and charged twice ($0.000605) for the one answer the ledger kept.
      expect(posts()).toBe(1);
      expect(await spent()).toBeCloseTo(before + 0.0003025, 10);
    });
  }

  it('an error answer (503) is still retried: it was not charged', async () => {
    await t.admin('faults', { faults: ['503,times=2,path=/v1/chat/completions'] });
    t.clearRequests();
    const r = await t.run(CALL, { env: { ROUTER_STATE_DIR: freshState() } });
    expect(r.code).toBe(0);
    expect(posts()).toBe(3);
  });
});

describe('under a budget, a call whose cost its answer did not say', () => {
  it('lost with no answer at all: its bound is in the ledger and counts against the budget', async () => {
    const state = freshState();
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008' };
    await t.admin('faults', { faults: ['lost,times=1,path=/v1/chat/completions'] });
    expect((await t.run([...CALL, '--no-stream'], { env })).code).toBe(8);
    // Before: no line, and the budget took the charge as never made.
    expect(ledger(state)).toEqual([expect.objectContaining({ endpoint: 'unknown', cost: 0.000354, unsettled: expect.stringMatching(/counted at its bound/) })]);
    expect(holds(state)).toEqual([]);
    expect((await t.run(CALL, { env })).code).toBe(0);
    const third = await t.run(CALL, { env });
    expect(third.code).toBe(4);
    expect(third.stderr).toMatch(/over what is left of daily_budget \(\$0\.0001435/);
  });

  it('a stream cut mid-answer: its line holds the bound until `usage --reconcile` puts the charge beside it', async () => {
    const state = freshState();
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008' };
    await t.admin('faults', { faults: ['cut,after=3,times=1,path=/v1/chat/completions'] });
    expect((await t.run(CALL, { env })).code).toBe(8);
    // Before: the line had no cost, so the budget counted nothing of what the cut stream was charged.
    const [cut] = ledger(state);
    expect(cut).toMatchObject({ endpoint: '/v1/chat/completions', id: expect.stringMatching(/^gen-/), cost: 0.000354, unsettled: expect.any(String) });
    // `router usage` says the total holds a bound, not a charge. Before: nothing said it, piped, on a terminal or in --json.
    const before = await t.run(['usage', '--json'], { env });
    expect(JSON.parse(before.stdout)).toMatchObject({ total: { calls: 1, cost: 0.000354 }, unsettled: { calls: 1, cost: 0.000354 } });
    expect(before.stderr).toBe('note: 1 call counted at its bound ($0.000354 of the cost), not known when it ended (cut or killed): router usage --reconcile puts the charge beside those the service knows\n');
    expect((await t.run(['usage', '--reconcile'], { env })).code).toBe(0);
    const after = await t.run(['usage', '--json', '--by', 'model'], { env });
    expect(JSON.parse(after.stdout)).toMatchObject({ unsettled: { calls: 0, cost: 0 } });
    expect(after.stderr).toBe('');
    const settled = ledger(state).find((l) => l.reconciles === cut!.id)!;
    expect(settled.real_cost).toBeGreaterThan(0);
    expect(settled.cost).toBeCloseTo(settled.real_cost! - 0.000354, 10);
  });
  it("a cut call of another profile: the note names the --profile whose `usage --reconcile` settles it", async () => {
    const state = freshState();
    const env = { ROUTER_STATE_DIR: state, ROUTER_CONFIG_DIR: join(state, 'config'), ROUTER_DAILY_BUDGET: '0.0008' };
    for (const p of ['home', 'work']) expect((await t.run(['config', 'set', 'model', 'local/lorem', '--profile', p], { env })).code).toBe(0);
    await t.admin('faults', { faults: ['cut,after=3,times=1,path=/v1/chat/completions'] });
    expect((await t.run([...CALL, '--profile', 'work'], { env })).code).toBe(8);
    // Before: `router usage --reconcile` was named, which settles the run's profile ("home") alone: the line stayed at its bound.
    const note = (await t.run(['usage', '--profile', 'home'], { env })).stderr;
    expect(note, 'the note').toBe('note: 1 call counted at its bound ($0.000354 of the cost), not known when it ended (cut or killed): router usage --reconcile --profile work puts the charge beside those the service knows\n');
    expect((await t.run(['usage', '--reconcile', '--profile', 'work'], { env })).code).toBe(0);
    expect((await t.run(['usage', '--profile', 'home'], { env })).stderr).toBe('');
  });
});

describe('chat -i under a budget, a turn whose answer is lost before any id came', () => {
  it('writes its bound to the ledger as one-shot chat does, and the conversation goes on', async () => {
    const state = freshState();
    const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008', NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
    const keys = new PassThrough();
    s.streams.stdin = keys;
    await t.admin('faults', { faults: ['lost,times=1,path=/v1/chat/completions'] });
    const repl = main(['node', 'router', 'chat', '-i', ...CALL.slice(1, -1)], s.streams);
    keys.write('write 500 words\n');
    await until(() => /error:/.test(s.stderr()));
    keys.write('/exit\n');
    expect(await repl).toBe(0);
    expect(s.stderr()).toMatch(/error: connection to 127\.0\.0\.1:\d+ failed: .*\(not retried/);
    // Before: no line, and the budget took the charge as never made.
    expect(ledger(state)).toEqual([expect.objectContaining({ command: 'chat', endpoint: 'unknown', cost: 0.000354, unsettled: expect.stringMatching(/counted at its bound/) })]);
    expect(holds(state)).toEqual([]);
  });
});

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// One state of the budgets, seen by every place that says what was spent or is left: the same number.
let dir: string;
let env: Record<string, string>;
let stateDir: string;

emulatorPerFile('router-spend-agree-', (f) => ({ dir, env } = f));

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ROUTER_STATE_DIR: stateDir, ...o.env } });

/**
 * Today: a settled call ($0.0002), one counted at its bound ($0.0003, unsettled), a torn line, a
 * call whose cost the ledger could not take ($0.0001, an `unrecorded-` hold) and a batch not yet
 * seen ended ($0.00005, its hold): $0.00065 spent, $0.00015 of it not in the ledger.
 */
function buildState(): void {
  const time = new Date().toISOString();
  const line = (o: object) => JSON.stringify({ time, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', ...o });
  const torn = line({ id: 'gen-torn', cost: 0.0009 }).slice(0, 40);
  writeFileSync(join(stateDir, 'usage.jsonl'), [line({ id: 'gen-a', cost: 0.0002 }), line({ id: 'gen-b', cost: 0.0003, unsettled: 'cut' }), torn, ''].join('\n'));
  const holds = join(stateDir, 'budget-holds');
  mkdirSync(holds);
  writeFileSync(join(holds, 'unrecorded-999999-abcdef.json'), JSON.stringify({ profile: 'default', usd: 0.0001, pid: 999999, time }));
  writeFileSync(join(holds, 'batch-batch_1.json'), JSON.stringify({ profile: 'default', usd: 0.00005, batch_id: 'batch_1', time }));
}

beforeEach(() => {
  stateDir = join(dir, `state-${Math.random().toString(36).slice(2)}`);
  mkdirSync(stateDir);
  buildState();
});

const KEPT = '\\$0\\.000150 of it held by batches not yet seen ended or calls the ledger could not take';
const DAMAGED = /warning: 1 line of the usage ledger .*usage\.jsonl \(line 3\) is damaged \(torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile\): the budgets do not count what it cost \(router usage shows the ledger\)\n/g;

describe('spent and left, one number for one state', () => {
  it('router usage counts what the checks count, and says the part not in the ledger', async () => {
    const json = await run(['usage', '--json', '--jq', '.budgets[0]'], { env: { ROUTER_DAILY_BUDGET: '0.001' } });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'daily_budget', spent: 0.00065, unrecorded: 0.00015, left: 0.00035 });
    const tty = await run(['usage'], { env: { ROUTER_DAILY_BUDGET: '0.001' }, tty: { stdout: true } });
    expect(tty.stdout).toMatch(new RegExp(`daily_budget: \\$0\\.000650 of \\$0\\.001000 spent today \\(UTC\\), ${KEPT}, \\$0\\.000350 left;`));
  });

  it('a refused chat, a dry run and a batch estimate say the same spent and left, and the damaged line once', async () => {
    const reached = `daily_budget of \\$0\\.00065 reached \\(ROUTER_DAILY_BUDGET\\): \\$0\\.000650 spent today \\(UTC\\), ${KEPT};`;
    const refused = await run(['chat', '--model', 'local/echo', 'hello'], { env: { ROUTER_DAILY_BUDGET: '0.00065' } });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(new RegExp(`error: ${reached}`));
    expect(refused.stderr.match(DAMAGED)).toHaveLength(1);
    // A dry run reads the holds too, and removes none.
    const dry = await run(['chat', '--model', 'local/echo', '--dry-run', 'hello'], { env: { ROUTER_DAILY_BUDGET: '0.00065' } });
    expect(dry.stderr).toMatch(new RegExp(`note: ${reached}.*would be refused`));
    expect(dry.stderr.match(DAMAGED)).toHaveLength(1);
    expect(readdirSync(join(stateDir, 'budget-holds')).sort()).toEqual(['batch-batch_1.json', 'unrecorded-999999-abcdef.json']);
    const left = `what is left of daily_budget \\(\\$0\\.000350, ROUTER_DAILY_BUDGET, after the \\$0\\.000150 held by batches not yet seen ended or calls the ledger could not take\\)`;
    const capped = await run(['chat', '--model', 'local/echo', '--max-tokens', '100000', 'hello'], { env: { ROUTER_DAILY_BUDGET: '0.001' } });
    expect(capped.code).toBe(4);
    expect(capped.stderr).toMatch(new RegExp(`over ${left}: --max-tokens 100000 does not fit`));
    const file = join(stateDir, 'r.jsonl');
    writeFileSync(file, `${JSON.stringify({ custom_id: 'q0', body: { model: 'local/echo', messages: [{ role: 'user', content: 'q' }], max_tokens: 100000 } })}\n`);
    const batch = await run(['batch', 'create', file, '--dry-run'], { env: { ROUTER_DAILY_BUDGET: '0.001' } });
    expect(batch.code).toBe(4);
    expect(batch.stderr).toMatch(new RegExp(`over ${left}: nothing was submitted`));
  });
});

describe('a ledger line no call of router wrote makes no room in a budget', () => {
  it('a negative, a string or an endless cost, and a second reconcile of one call: refused, named by line, not counted', async () => {
    // Before, the hand-edited -5 was summed: the budget had $5 more room and the chat below was sent.
    rmSync(join(stateDir, 'budget-holds'), { recursive: true });
    const time = new Date().toISOString();
    const line = (o: object) => JSON.stringify({ time, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', ...o });
    const reconcile = (cost: number, real: number) => line({ reconciles: 'gen-b', real_cost: real, cost });
    const ledger = [
      line({ id: 'gen-a', cost: 0.0002 }),
      line({ id: 'gen-x', cost: -5 }),
      line({ id: 'gen-y', cost: '0.3' }),
      line({ id: 'gen-b', cost: 0.0003, unsettled: 'cut' }),
      // reconcile's own line: the call cost $0.0001, not its bound: taken.
      reconcile(-0.0002, 0.0001),
      // once more, and one that would take a call below nothing: refused.
      reconcile(-0.0002, 0.0001),
      `${line({ id: 'gen-z' }).slice(0, -1)},"cost":1e999}`,
      line({ reconciles: 'gen-a', real_cost: 0, cost: -1 }),
    ];
    writeFileSync(join(stateDir, 'usage.jsonl'), `${ledger.join('\n')}\n`);
    const refused = await run(['chat', '--model', 'local/echo', 'hello'], { env: { ROUTER_DAILY_BUDGET: '0.0003' } });
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(/daily_budget of \$0\.0003 reached \(ROUTER_DAILY_BUDGET\): \$0\.000300 spent today/);
    const path = join(stateDir, 'usage.jsonl');
    expect(refused.stderr).toContain(`warning: 5 lines of the usage ledger ${path} (lines 2, 3, 6, 7, 8) are damaged (torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile): the budgets do not count what they cost`);
    const usage = await run(['usage', '--json'], { env: { ROUTER_DAILY_BUDGET: '0.0003' } });
    expect(JSON.parse(usage.stdout)).toMatchObject({ total: { cost: 0.0003 }, budgets: [{ spent: 0.0003, left: 0 }] });
    expect(usage.stderr).toContain(`warning: 5 lines of the usage ledger ${path} (lines 2, 3, 6, 7, 8) are damaged`);
  });
  it('a line whose time is no date or that names no profile is said damaged, by line, not passed over unsaid', async () => {
    // Before, a $0.5 line dated "yesterday", or with a profile that is no name, was counted by no budget and said by nothing.
    rmSync(join(stateDir, 'budget-holds'), { recursive: true });
    const time = new Date().toISOString();
    const line = (o: object) => JSON.stringify({ time, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', ...o });
    const { profile: _, ...noProfile } = JSON.parse(line({ cost: 0.5 })) as Record<string, unknown>;
    const ledger = [line({ id: 'gen-a', cost: 0.0002 }), line({ time: 'yesterday', cost: 0.5 }), line({ profile: ['default'], cost: 0.5 }), JSON.stringify(noProfile)];
    writeFileSync(join(stateDir, 'usage.jsonl'), `${ledger.join('\n')}\n`);
    const path = join(stateDir, 'usage.jsonl');
    const said = `warning: 3 lines of the usage ledger ${path} (lines 2, 3, 4) are damaged (torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile)`;
    const chat = await run(['chat', '--model', 'local/echo', 'hello'], { env: { ROUTER_DAILY_BUDGET: '0.01' } });
    expect(chat.stderr).toContain(said);
    const usage = await run(['usage', '--json'], { env: { ROUTER_DAILY_BUDGET: '0.01' } });
    expect(usage.stderr).toContain(said);
  });
});

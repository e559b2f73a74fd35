import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { kitPerTest } from '../support/inprocess-env.js';
import { parseFault } from '../../src/emulator/http/faults.js';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { BudgetReached, BudgetUnkept, chatModel, chatWithTools, CostCapExceeded, functionTool, InvalidAmount, serviceListPrices, SpendError, SpendGuard, ToolCallsError, usdAmount, type BudgetSettings } from '../../src/kit/index.js';

// The kit's spend guard, budgets and ledger for a program (router-cli/kit), over real HTTP to the
// emulator: refusals are typed errors with a code, nothing sent; the tool loop checks every round.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let stateDir: string;
let client: RouterClient;

kitPerTest('router-kit-spend-', (f) => ({ emu, dir, env, stateDir, client } = f));

const chats = () => emu.requestLog.filter((r) => r.path.endsWith('/chat/completions'));
const daily = (usd: string): BudgetSettings => ({ profile: 'app', dailyBudget: usd, from: { dailyBudget: { kind: 'env', name: 'ROUTER_DAILY_BUDGET' } } });
const guard = (o: Partial<ConstructorParameters<typeof SpendGuard>[0]> = {}) => new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, ...o });
const ledger = () => (existsSync(join(stateDir, 'usage.jsonl')) ? readFileSync(join(stateDir, 'usage.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
const ask = (content: string) => ({ model: 'local/tools', messages: [{ role: 'user' as const, content }] });
const weather = (answer: string) => functionTool('weather', { type: 'object', properties: { city: { type: 'string' } } }, () => answer);

describe('budgets in the kit', () => {
  it('a budget reached is a BudgetReached (code budget_reached, the budget read from the ledger), and nothing is sent', async () => {
    writeFileSync(join(stateDir, 'usage.jsonl'), `${JSON.stringify({ time: new Date().toISOString(), profile: 'app', command: 'kit', endpoint: '/v1/chat/completions', cost: 0.6 })}\n`);
    const before = chats().length;
    const err = await chatWithTools(client, ask('weather?'), { tools: new Map([['weather', weather('sunny')]]), guard: guard({ budgets: daily('0.5') }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetReached);
    expect(err).toBeInstanceOf(SpendError);
    expect((err as BudgetReached).code).toBe('budget_reached');
    expect((err as BudgetReached).budget).toMatchObject({ name: 'daily_budget', limit: 0.5, spent: 0.6, from: 'ROUTER_DAILY_BUDGET' });
    expect((err as Error).message).toMatch(/^daily_budget of \$0\.50 reached \(ROUTER_DAILY_BUDGET\): \$0\.600000 spent today \(UTC\)/);
    expect(chats().length).toBe(before);
  });

  it('under a budget each round is held, recorded in the ledger (one line a round) and the hold let go when the loop ends', async () => {
    const g = guard({ budgets: daily('1') });
    let heldDuringTool = 0;
    const tool = functionTool('weather', { type: 'object', properties: { city: { type: 'string' } } }, () => {
      heldDuringTool = readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.endsWith('.json')).length;
      return 'sunny';
    });
    const r = await chatWithTools(client, ask('weather in Paris?'), { tools: new Map([['weather', tool]]), guard: g, command: 'my-app' });
    expect(r.rounds).toBe(1);
    expect(heldDuringTool).toBe(1);
    expect(readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.endsWith('.json'))).toEqual([]);
    const lines = ledger();
    expect(lines.map((l) => [l.profile, l.command, l.endpoint])).toEqual([
      ['app', 'my-app', '/v1/chat/completions'],
      ['app', 'my-app', '/v1/chat/completions'],
    ]);
    expect(g.spent).toBeCloseTo((lines[0]!.cost as number) + (lines[1]!.cost as number), 12);
  });

  it('a state folder that cannot be written is a BudgetUnkept under a budget: nothing sent', async () => {
    const file = join(dir, `not-a-folder-${Math.random()}`);
    writeFileSync(file, '');
    const before = chats().length;
    const err = await guard({ env: { ROUTER_STATE_DIR: file }, budgets: daily('1') })
      .check({ body: ask('hi'), models: ['local/tools'], completes: true, limitField: 'max_completion_tokens' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnkept);
    expect((err as BudgetUnkept).code).toBe('budget_unkept');
    // The way past it is named as the program gives it, not the CLI's flag (before: "--ignore-budget sends it anyway").
    expect((err as BudgetUnkept).message).toMatch(/nothing was sent \(ignoreBudget: true sends it anyway\)$/);
    expect(chats().length).toBe(before);
  });

  it('a ledger that cannot be opened (a link to a folder not there) is a BudgetUnkept that names the program\'s option', async () => {
    symlinkSync(join(stateDir, 'gone', 'usage.jsonl'), join(stateDir, 'usage.jsonl'));
    const err = await guard({ budgets: daily('1'), words: { maxCost: 'cap', ignoreBudget: 'unguarded()', spender: 'my calls' } })
      .check({ body: ask('hi'), models: ['local/tools'], completes: true, limitField: 'max_completion_tokens' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnkept);
    expect((err as BudgetUnkept).message).toMatch(/usage\.jsonl cannot be written .*nothing was sent \(unguarded\(\) sends it anyway\)$/);
  });

  it('an amount that is not one is an InvalidAmount', () => {
    expect(usdAmount('0.50', 'maxCost')).toBe(0.5);
    expect(() => usdAmount('1e3', 'maxCost')).toThrow(InvalidAmount);
  });
});

describe('a cost cap over the kit tool loop', () => {
  it('stops before a round that would pass the cap: a CostCapExceeded, that round not sent', async () => {
    const before = chats().length;
    const g = guard({ maxCost: 0.01 });
    const err = await chatWithTools(client, ask('weather in Paris?'), { tools: new Map([['weather', weather('a'.repeat(200_000))]]), guard: g }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CostCapExceeded);
    const e = err as CostCapExceeded;
    expect(e.code).toBe('cost_cap_exceeded');
    expect(e.bound).toBeGreaterThan(e.cap.usd);
    expect(e.message).toMatch(/^this call could cost up to \$0\.2\d+, over maxCost \$0\.01, less the \$0\.0000\d+ this guard's calls already spent: not even one completion token fits/);
    // The first round was sent; the second, with the long result, was not.
    expect(chats().length).toBe(before + 1);
  });

  it("a model's prompt under the same guard: the round that would pass the cap is not sent", async () => {
    const before = chats().length;
    const err = await chatModel(client, 'local/tools').prompt('weather in Paris?', { tools: [weather('a'.repeat(200_000))], guard: guard({ maxCost: 0.01 }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CostCapExceeded);
    expect(chats().length).toBe(before + 1);
  });

  it('a loop that fits goes on: every round lowered to what is left, the whole within the cap', async () => {
    const before = chats().length;
    const g = guard({ maxCost: 0.01 });
    const r = await chatWithTools(client, ask('weather in Paris?'), { tools: new Map([['weather', weather('sunny')]]), guard: g });
    expect(r.rounds).toBe(1);
    expect(r.completion.choices[0]!.message.content).toMatch(/weather answered: sunny/);
    const limits = chats()
      .slice(before)
      .map((q) => (q.body as { max_completion_tokens: number }).max_completion_tokens);
    expect(limits).toHaveLength(2);
    expect(limits[1]).toBeLessThanOrEqual(limits[0]!);
    expect(g.spent).toBeGreaterThan(0);
    expect(g.spent).toBeLessThanOrEqual(0.01);
    // No budget, nothing asked: nothing goes to the ledger.
    expect(ledger()).toEqual([]);
  });

  it('more rounds than allowed is a ToolCallsError (max_rounds) with the calls not run', async () => {
    const err = await chatWithTools(client, ask('weather?'), { tools: new Map([['weather', weather('sunny')]]), maxRounds: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolCallsError);
    expect((err as ToolCallsError).code).toBe('max_rounds');
    expect((err as ToolCallsError).calls.map((c) => c.name)).toEqual(['weather']);
  });
});

describe('the CLI over the kit guard', () => {
  it('chat -i checks each round of a tool turn against the budget: a round that would pass it is not sent, said as today', async () => {
    const tools = join(stateDir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: "head -c 200000 /dev/zero | tr '\\0' a" }]));
    const t = testStreams({ env: { ...env, ROUTER_STATE_DIR: stateDir, ROUTER_DAILY_BUDGET: '0.01', NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
    const keys = new PassThrough();
    t.streams.stdin = keys;
    const before = chats().length;
    const repl = main(['node', 'router', 'chat', '-i', '--model', 'local/tools', '--max-tokens', '50', '--tools', tools], t.streams);
    keys.write('weather in Paris?\n');
    // Until the refusal is said: 1000 looks (10 s) can be too few on a loaded machine, and /exit typed before it ends the turn unchecked.
    await until(() => /error:/.test(t.stderr()));
    keys.write('/exit\n');
    expect(await repl).toBe(0);
    expect(t.stderr()).toMatch(/error: this call could cost up to \$0\.2\d+, over what is left of daily_budget \(\$0\.0\d+, ROUTER_DAILY_BUDGET\): not even one completion token fits/);
    // The first round went; the second, with the 200 kB result, did not.
    expect(chats().length).toBe(before + 1);
    expect(ledger()).toHaveLength(1);
    expect(readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.endsWith('.json'))).toEqual([]);
  });
});

describe('the kit under a budget, a call whose answer is lost after it went out', () => {
  it('counts its bound in the ledger (unsettled) and in guard.spent, as the CLI does', async () => {
    const g = guard({ budgets: daily('1') });
    emu.faults.set([parseFault('lost,times=1,path=/v1/chat/completions')]);
    const err = await chatWithTools(client, { model: 'local/lorem', max_completion_tokens: 200, messages: [{ role: 'user', content: 'write 500 words' }] }, { tools: new Map([['weather', weather('sunny')]]), guard: g })
      .catch((e: unknown) => e)
      .finally(() => emu.faults.set([]));
    expect(err).toMatchObject({ maybeDelivered: true });
    // Before: no line and nothing spent, so the budget took a call the service charged as never made.
    const [line] = ledger();
    expect(line).toMatchObject({ profile: 'app', endpoint: 'unknown', unsettled: expect.stringMatching(/counted at its bound/) });
    expect(line!.cost).toBeGreaterThan(0);
    expect(g.spent).toBe(line!.cost);
    expect(existsSync(join(stateDir, 'budget-holds')) ? readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.endsWith('.json')) : []).toEqual([]);
  });
});

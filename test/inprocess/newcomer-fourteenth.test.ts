import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { BudgetReached, budgetLimits, chatModel, CostCapExceeded, KitError, serviceListPrices, SpendGuard, ToolSet, toolEnv, ToolSourceError } from '../../src/kit/index.js';
import { kitPerTest } from '../support/inprocess-env.js';

// Issue 46, round 14: a programmer using router-cli as a library. What its errors say names the
// program's own options (maxCost, ignoreBudget, toolTimeoutMs), never the CLI's flags it never gave.
const ROOT = resolve(import.meta.dirname, '..', '..');
let emu: Emulator;
let stateDir: string;
let client: RouterClient;

kitPerTest('router-newcomer-14-', (f) => ({ emu, stateDir, client } = f));

const chats = () => emu.requestLog.filter((r) => r.path.endsWith('/chat/completions')).length;

it("a program's maxCost refusal names maxCost and the guard's calls, not --max-cost and a command", async () => {
  const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, maxCost: 0.0002 });
  const model = chatModel(client, 'local/echo');
  let err: unknown;
  for (let i = 0; i < 100 && !err; i++) err = await model.prompt('a fairly long prompt', { guard }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(CostCapExceeded);
  const before = chats();
  // Was "over --max-cost $0.0002, less the $… this command already spent".
  expect((err as CostCapExceeded).message).toMatch(/, over maxCost \$0\.0002, less the \$0\.0000\d+ this guard's calls already spent: /);
  expect((err as CostCapExceeded).cap.name).toMatch(/^maxCost \$0\.0002, less the /);
  expect(chats()).toBe(before);
});

it("a program's budget reached says ignoreBudget: true goes past it, not --ignore-budget", async () => {
  writeFileSync(join(stateDir, 'usage.jsonl'), `${JSON.stringify({ time: new Date().toISOString(), profile: 'my-app', command: 'my-app', endpoint: '/v1/chat/completions', cost: 0.6 })}\n`);
  const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, budgets: budgetLimits({ profile: 'my-app', daily: 0.5 }) });
  const err = await chatModel(client, 'local/echo').prompt('hi', { guard }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BudgetReached);
  expect((err as BudgetReached).message).toMatch(/^daily_budget of \$0\.50 reached \(budgets\.daily\): \$0\.600000 spent today \(UTC\); it resets at \S+ \(ignoreBudget: true for one call\)$/);
});

it("an MCP server that does not answer a prompt's call in time: the error names toolTimeoutMs", async () => {
  const fixture = join(ROOT, 'test/support/mcp-fixture-server.mjs');
  const tools = await ToolSet.open({ mcp: [[process.execPath, fixture, 'hang'].map((a) => `'${a}'`).join(' ')], env: toolEnv(process.env) });
  try {
    const err = await chatModel(client, 'local/tools').prompt('hang', { tools, toolTimeoutMs: 500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolSourceError);
    // Was "(--tool-timeout 0.5s)": a flag of the CLI.
    expect((err as ToolSourceError).message).toBe('MCP server fixture-hang did not answer a call of hang in time (toolTimeoutMs 0.5s)');
  } finally {
    await tools.close();
  }
});

it('a ToolSourceError is a KitError, as the kit errors table says: one instanceof catches them all', async () => {
  const err = await ToolSet.open({ mcp: [`'${process.execPath}' -e 'process.exit(3)'`], env: toolEnv(process.env) }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ToolSourceError);
  // Was an Error only: `instanceof KitError` missed the failures of MCP servers.
  expect(err).toBeInstanceOf(KitError);
  expect(err).toMatchObject({ name: 'ToolSourceError', code: 'start', kind: 'start' });
});

it('a budget not reached but with less left than a call may cost: a CostCapExceeded naming the budget, as docs/library.md says', async () => {
  writeFileSync(join(stateDir, 'usage.jsonl'), `${JSON.stringify({ time: new Date().toISOString(), profile: 'my-app', command: 'my-app', endpoint: '/v1/chat/completions', cost: 0.49999 })}\n`);
  const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, budgets: budgetLimits({ profile: 'my-app', daily: 0.5 }) });
  const before = chats();
  const err = await chatModel(client, 'local/echo').prompt('hi', { guard }).catch((e: unknown) => e);
  guard.release();
  expect(err).toBeInstanceOf(CostCapExceeded);
  expect((err as CostCapExceeded).cap.name).toBe('what is left of daily_budget ($0.000010, budgets.daily)');
  expect(chats()).toBe(before);
});

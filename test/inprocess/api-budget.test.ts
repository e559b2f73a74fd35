import { expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

// router api holds no call to the budgets and writes none to the usage ledger: under a budget a paid POST through it
// spent beside the budget, unseen by it and by router usage. Now refused (exit 4, nothing sent) unless --ignore-budget.
let t: CliEnv;
sharedCliEnv((e) => (t = e));

const body = JSON.stringify({ model: 'local/lorem', messages: [{ role: 'user', content: 'write' }], max_tokens: 300 });
const sent = () => t.requests().filter((r) => r.path === '/v1/chat/completions').length;

it('a paid POST under a budget is refused, naming the budget and the way past it; other calls go', async () => {
  const env = { ROUTER_DAILY_BUDGET: '0.0001' };
  const refused = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-'], { env, input: body });
  // Old code: sent, exit 0, the answer printed, and no budget or ledger the wiser.
  expect(refused).toMatchObject({ code: 4, stdout: '' });
  expect(refused.stderr).toBe('error: router api is not held to daily_budget (ROUTER_DAILY_BUDGET), nor is what it spends in the usage ledger: POST /v1/chat/completions was not sent; use the command for it (chat, responses, embed, speak, decide, batch create), or pass --ignore-budget\n');
  expect(sent()).toBe(0);
  const monthly = await t.run(['api', 'POST', '/v1/embeddings/', '-f', 'model=local/embed', '-f', 'input=hi'], { env: { ROUTER_MONTHLY_BUDGET: '5' } });
  expect(monthly).toMatchObject({ code: 4 });
  expect(monthly.stderr).toMatch(/^error: router api is not held to monthly_budget \(ROUTER_MONTHLY_BUDGET\)/);
  // A fragment is never sent: the path is the chat route all the same.
  for (const path of ['v1/chat/completions', '/v1/chat/completions#', '/v1//chat/completions?x=1']) expect((await t.run(['api', 'POST', path, '--input', '-'], { env, input: body })).code).toBe(4);
  expect(sent()).toBe(0);
  const past = await t.run(['api', 'POST', '/v1/chat/completions', '--ignore-budget', '--input', '-'], { env, input: body });
  expect(past.code, past.stderr).toBe(0);
  expect(sent()).toBe(1);
  expect((await t.run(['api', '/v1/models'], { env })).code).toBe(0);
  expect((await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-'], { input: body })).code).toBe(0);
});

it('the paid routes no command sends (transcriptions, images, rerank) are refused under a budget too', async () => {
  const env = { ROUTER_DAILY_BUDGET: '5' };
  // Old code: sent (the real service charges them; router serve answers 404), beside the budget.
  for (const path of ['/v1/audio/transcriptions', '/v1/images', '/v1/rerank']) {
    const r = await t.run(['api', 'POST', path, '-f', 'model=x/y'], { env });
    expect(r).toMatchObject({ code: 4, stdout: '' });
    expect(r.stderr).toBe(`error: router api is not held to daily_budget (ROUTER_DAILY_BUDGET), nor is what it spends in the usage ledger: POST ${path} was not sent; pass --ignore-budget to send it anyway\n`);
    expect(t.requests().filter((q) => q.path === path)).toHaveLength(0);
  }
});

it('a paid POST under a budget is refused when the API root leaves /api to the path too', async () => {
  const env = { ROUTER_DAILY_BUDGET: '5', ROUTER_API_ROOT: t.apiRoot.replace(/\/api$/, '') };
  // Old code: the path /api/v1/chat/completions was not taken for the chat route: sent, exit 0, beside the budget.
  const before = sent();
  const r = await t.run(['api', 'POST', '/api/v1/chat/completions', '--input', '-'], { env, input: body });
  expect(r).toMatchObject({ code: 4, stdout: '' });
  expect(r.stderr).toMatch(/^error: router api is not held to daily_budget .*: POST \/api\/v1\/chat\/completions was not sent; use the command for it/);
  expect(sent()).toBe(before);
});

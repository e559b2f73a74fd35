import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// A stream an emulator fault breaks mid-way is billed for what it generated, as the service bills a
// provider's stream broken mid-way: its generation is kept (finish_reason "error"), so the CLI's ledger
// line, which has an id and no cost, is settled by `usage --reconcile` at once. Was: refunded, no
// generation, the line "not known to the service yet" for an hour, then "unknown to the service".
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const usedCredits = async (): Promise<number> => JSON.parse((await run(['credits', '--json'], { ROUTER_MANAGEMENT_KEY: t.managementKey })).stdout).total_usage;
const round = (usd: number) => Math.round(usd * 1e10) / 1e10;
const generation = async (id: string) => {
  const res = await fetch(`${t.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
  return { status: res.status, data: res.status === 200 ? ((await res.json()) as { data: Record<string, unknown> }).data : undefined };
};

it.each([
  ['chat', 'cut,after=8', '/v1/chat/completions'],
  ['chat', 'error-chunk,after=8', '/v1/chat/completions'],
  ['responses', 'cut,after=8', '/v1/responses'],
  ['speak', 'cut,after=2', '/v1/audio/speech'],
])('%s broken by the fault %s: charged what was written, its generation kept, reconciled at once', async (command, fault, endpoint) => {
  const state = join(t.dir, `fault-${command}-${fault.split(',')[0]}`);
  const env = { ROUTER_STATE_DIR: state, ROUTER_MANAGEMENT_KEY: t.managementKey };
  const args = command === 'speak' ? ['speak', 'a long enough sentence to be cut in the middle of it', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'cut.mp3')] : [command, '--model', 'local/lorem', 'write 100 words'];
  const before = await usedCredits();
  await t.admin('faults', { faults: [`${fault},times=1,path=${endpoint}`] });
  try {
    const r = await run(args, env);
    expect(r.code, r.stderr).not.toBe(0);
  } finally {
    await t.admin('faults', { faults: [] });
  }
  const [line, ...more] = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(more).toHaveLength(0);
  expect(line).not.toHaveProperty('cost');
  const id = line!.id as string;
  // The service knows the call: 404 before.
  const g = await generation(id);
  expect(g.status).toBe(200);
  expect(g.data).toMatchObject({ cancelled: false, finish_reason: 'error', streamed: true });
  const cost = g.data!.total_cost as number;
  expect(cost).toBeGreaterThan(0);
  expect(round((await usedCredits()) - before)).toBe(cost);
  const reconciled = await run(['usage', '--reconcile', '--json'], env);
  expect(reconciled.stderr).toMatch(/^reconciled 1 call of profile "default": .*; none left$/m);
  expect(JSON.parse(reconciled.stdout)).toMatchObject({ reconciled: [expect.objectContaining({ id })], charged_cost: cost, not_found: [], pending: [] });
});

// A Responses stream cut after `response.created` (which carries the id the CLI keeps) and before any
// text is free, and its generation is kept all the same (no tokens, nothing charged), so the CLI's
// ledger line is settled at once. Was: no generation, the line "not known to the service yet" for an
// hour, then "not found".
it.each(['cut,after=1', 'error-chunk,after=2'])('responses broken by %s before any text: free, its generation kept, reconciled at once', async (fault) => {
  const state = join(t.dir, `fault-before-text-${fault.split(',')[0]}`);
  const env = { ROUTER_STATE_DIR: state, ROUTER_MANAGEMENT_KEY: t.managementKey };
  const before = await usedCredits();
  await t.admin('faults', { faults: [`${fault},times=1,path=/v1/responses`] });
  try {
    const r = await run(['responses', '--model', 'local/lorem', 'write 100 words'], env);
    expect(r.code, r.stderr).not.toBe(0);
  } finally {
    await t.admin('faults', { faults: [] });
  }
  const [line, ...more] = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(more).toHaveLength(0);
  expect(line).toMatchObject({ command: 'responses', id: expect.stringMatching(/^resp_/) });
  expect(line).not.toHaveProperty('cost');
  const id = line!.id as string;
  const g = await generation(id);
  expect(g.status).toBe(200);
  expect(g.data).toMatchObject({ cancelled: false, finish_reason: 'error', streamed: true, tokens_completion: 0, total_cost: 0 });
  expect(round((await usedCredits()) - before)).toBe(0);
  const reconciled = await run(['usage', '--reconcile', '--json'], env);
  expect(reconciled.stderr).toMatch(/^reconciled 1 call of profile "default": .*; none left$/m);
  expect(JSON.parse(reconciled.stdout)).toMatchObject({ reconciled: [expect.objectContaining({ id })], charged_cost: 0, not_found: [], pending: [] });
  // The CLI's own view: the call costs nothing and is waiting for nothing.
  const usage = JSON.parse((await run(['usage', '--json'], env)).stdout);
  expect(usage.total).toMatchObject({ calls: 1, cost: 0 });
  expect(await run(['usage', '--reconcile'], env)).toMatchObject({ code: 0, stderr: expect.stringMatching(/^reconciled 0 calls of profile "default"; none left$/m) });
});

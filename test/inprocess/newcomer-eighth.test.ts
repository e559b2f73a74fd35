import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';

// Issue 46, round 8: a user relying on cost control, tools and profiles, from the tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const usedCredits = async (): Promise<number> => JSON.parse((await run(['credits', '--json'], { ROUTER_MANAGEMENT_KEY: t.managementKey })).stdout).total_usage;
const round = (usd: number) => Math.round(usd * 1e10) / 1e10;

it('an answer cut where a budget lowered its limit names the budget and the way past it, not --max-cost', async () => {
  const r = await run(['chat', '--model', 'local/lorem', 'write 500 words'], { ROUTER_DAILY_BUDGET: '0.0002' });
  expect(r.code).toBe(0);
  const [lowered, cut] = r.stderr.trim().split('\n');
  expect(lowered).toMatch(/^note: max tokens lowered to \d+ to stay within what is left of daily_budget /);
  const tokens = /lowered to (\d+)/.exec(lowered!)![1];
  expect(cut).toBe(`note: the answer was cut at its length limit (${tokens} tokens, lowered to fit what is left of daily_budget; raise it or pass --ignore-budget for more)`);
});

it('a response cut where a budget lowered its limit says so too', async () => {
  const r = await run(['responses', '--model', 'local/lorem', 'write 500 words'], { ROUTER_MONTHLY_BUDGET: '0.0002' });
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/\nnote: the response is incomplete \(cut at its length limit, \d+ output tokens, lowered to fit what is left of monthly_budget; raise it or pass --ignore-budget for more\)\n$/);
});

it('a tool loop refused by --max-cost in a later round still says, with --usage, what the rounds before it cost', async () => {
  // The tool's 2,000 bytes make the second round's prompt bound ($0.002 at local/tools' prices) pass the cap.
  const tools = join(t.dir, 'loud.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'loud', parameters: { type: 'object', properties: {} } }, command: "head -c 2000 /dev/zero | tr '\\0' a" }]));
  const before = await usedCredits();
  const r = await run(['chat', '--model', 'local/tools', '--tools', tools, '--usage', '--max-cost', '0.001', 'loud']);
  expect(r.code).toBe(4);
  const lines = r.stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(/^error: this call could cost up to \$\S+, over --max-cost \$0\.001, less the \$\S+ this command already spent: not even one completion token fits/);
  const usage = lines.find((l) => l.startsWith('usage: '));
  expect(usage).toMatch(/^usage: \d+ prompt \+ \d+ completion = \d+ tokens, cost \$\d\.\d+ \(bound \$\S+\)$/);
  // The cost said is what the emulator charged for that first round.
  expect(Number(/cost \$(\S+)/.exec(usage!)![1])).toBe(round(await usedCredits() - before));
});

it('--usage and the usage table give a cost to its last digit, as the emulator charged it', async () => {
  // local/lorem: $0.5/M prompt, $1.5/M completion; 7 prompt tokens cost $0.0000035.
  const state = { ROUTER_STATE_DIR: join(t.dir, 'eighth-state') };
  const before = await usedCredits();
  const r = await run(['chat', '--model', 'local/lorem', '--max-tokens', '1', '--usage', 'write 50 words about rivers'], state);
  expect(r.code).toBe(0);
  expect(round((await usedCredits()) - before)).toBe(0.000005);
  expect(r.stderr).toMatch(/^usage: 7 prompt \+ 1 completion = 8 tokens, cost \$0\.000005$/m);
  const half = await run(['chat', '--model', 'local/lorem', '--max-tokens', '2', '--usage', 'write 50 words about rivers'], state);
  expect(round((await usedCredits()) - before)).toBe(0.0000115);
  // Was $0.000006: the half a millionth the emulator charged was not shown.
  expect(half.stderr).toMatch(/^usage: 7 prompt \+ 2 completion = 9 tokens, cost \$0\.0000065$/m);
  const table = await run(['usage'], state);
  expect(table.stdout.trim().split('\n').at(-1)).toBe('total\t2\t14\t3\t17\t0.0000115');
});

it('--model on the command line: no note that the environment goes before the profile for the model', async () => {
  await run(['config', 'set', 'model', 'local/echo', '--profile', 'work']);
  const env = { ROUTER_PROFILE: 'work', ROUTER_MODEL: 'local/lorem' };
  const fromEnv = await run(['chat', '--max-tokens', '2', 'hi'], env);
  expect(fromEnv.stderr).toMatch(/^note: the environment goes before profile "work" for model \(ROUTER_MODEL\)/m);
  const flagged = await run(['chat', '--model', 'local/echo', 'hi'], env);
  expect(flagged).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
});

it("a command tool that prints binary: the model is told in one line, stderr warns; UTF-8 text passes as it is", async () => {
  const tools = join(t.dir, 'bytes.json');
  const tool = (name: string, command: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } }, command });
  writeFileSync(tools, JSON.stringify([tool('png', "printf '\\211PNG\\r\\n\\032\\n\\000\\377'"), tool('accents', "printf 'h\\303\\251llo \\342\\234\\223'")]));
  const bin = await run(['chat', '--model', 'local/tools', '--tools', tools, 'png']);
  expect(bin.code).toBe(0);
  expect(bin.stdout).toBe('From the tool results: png answered: [router: the output is 10 bytes of binary data, not UTF-8 text: not sent]\n');
  expect(bin.stderr).toBe('warning: tool png: its output is 10 bytes of binary data, not text: the model was told so, not sent the bytes\n');
  const text = await run(['chat', '--model', 'local/tools', '--tools', tools, 'accents']);
  expect(text).toMatchObject({ code: 0, stdout: 'From the tool results: accents answered: héllo ✓\n', stderr: '' });
});

it('responses with a tool loop: each round in the ledger, --usage their sum, both what the emulator charged', async () => {
  const tools = join(t.dir, 'fails.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'fails', parameters: { type: 'object', properties: {} }, command: 'echo oops >&2; exit 3' }]));
  const state = { ROUTER_STATE_DIR: join(t.dir, 'responses-rounds') };
  const before = await usedCredits();
  const r = await run(['responses', '--model', 'local/tools', '--tools', tools, '--usage', 'fails'], state);
  expect(r.code).toBe(0);
  const charged = round((await usedCredits()) - before);
  const rows = JSON.parse((await run(['usage', '--json'], state)).stdout).total;
  // Was 1 call and the last round's cost alone: the first round (the tool call) was charged but not counted.
  expect([rows.calls, rows.cost]).toEqual([2, charged]);
  expect(Number(/^usage: .* cost \$(\S+)$/m.exec(r.stderr)![1])).toBe(charged);
});

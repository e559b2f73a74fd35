import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 11: a newcomer's hour with the installed tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('--max-cost help of embed, speak and decide says over the cap is refused: they have no max tokens to lower', async () => {
  for (const cmd of ['embed', 'speak', 'decide']) {
    const help = (await run([cmd, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help, cmd).toContain('--max-cost <usd> the most this call may cost, from the model list\'s prices: a call that could cost more is refused (exit 4)');
    expect(help, cmd).not.toContain('max tokens');
  }
  const chat = (await run(['chat', '--help'])).stdout.replace(/\s+/g, ' ');
  expect(chat).toContain('the max tokens are lowered to fit, or the call is refused (exit 4)');
});

it('an MCP server that crashes at start is named by its error, not by node\'s version line after the stack', async () => {
  // node ends a crash with "Node.js v20…": that last line was all the error said of why.
  const missing = join(tmpdir(), 'router-no-such-dir', 'server.js');
  const r = await run(['chat', '--model', 'local/tools', '--mcp', `'${process.execPath}' '${missing}'`, 'hi']);
  expect(r.code).toBe(12);
  expect(r.stderr).toMatch(/^error: MCP server .*: ended before it answered; it said: Error: Cannot find module '.*server\.js'\n$/);
});

describe('responses --tools under a cap: router runs the function tools, a round at a time, each bounded as chat bounds them', () => {
  const toolsFile = (name: string, command: string) => {
    const path = join(t.dir, `${name}.json`);
    writeFileSync(path, JSON.stringify([{ type: 'function', name, parameters: { type: 'object', properties: {} }, command }]));
    return path;
  };

  it('a loop that fits runs under a budget and under --max-cost (it was refused as unboundable, the way out it named refused too)', async () => {
    const tools = toolsFile('sunny', 'echo sunny');
    const budget = await run(['responses', '--model', 'local/tools', '--tools', tools, 'sunny'], { ROUTER_DAILY_BUDGET: '2' });
    expect(budget.stderr).toBe('');
    expect(budget).toMatchObject({ code: 0, stdout: 'From the tool results: sunny answered: sunny\n' });
    const capped = await run(['responses', '--model', 'local/tools', '--tools', tools, '--max-cost', '0.01', '--usage', 'sunny']);
    expect(capped.code, capped.stderr).toBe(0);
    expect(capped.stderr).toMatch(/\nusage: .* \(bound \$\S+\)\n$/);
  });

  it('a later round the rest of the cap cannot pay for is refused (exit 4) before it is sent, with --usage saying what the first cost', async () => {
    const tools = toolsFile('loud', "head -c 2000 /dev/zero | tr '\\0' a");
    t.clearRequests();
    const r = await run(['responses', '--model', 'local/tools', '--tools', tools, '--usage', '--max-cost', '0.001', 'loud']);
    expect(r.code).toBe(4);
    const lines = r.stderr.trim().split('\n');
    expect(lines.at(-2)).toMatch(/^usage: .*cost \$\S+ \(bound \$\S+\)$/);
    expect(lines.at(-1)).toMatch(/^error: this call could cost up to \$\S+, over --max-cost \$0\.001, less the \$\S+ this command already spent: not even one completion token fits/);
    expect(t.requests().filter((q) => q.path.endsWith('/responses'))).toHaveLength(1);
  });

  it('the service\'s own tools (web_search) are still refused under a cap, naming how to let the call through', async () => {
    const path = join(t.dir, 'search.json');
    writeFileSync(path, JSON.stringify([{ type: 'web_search' }]));
    const r = await run(['responses', '--model', 'local/echo', '--tools', path, 'hi'], { ROUTER_DAILY_BUDGET: '2' });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: cannot bound the cost of this call for what is left of daily_budget .*--ignore-budget under a budget/);
    expect((await run(['responses', '--model', 'local/echo', '--tools', path, '--ignore-budget', 'hi'], { ROUTER_DAILY_BUDGET: '2' })).code).toBe(0);
  });
});

it('embed --file says when blank lines among the inputs were skipped: every later index is off its line number', async () => {
  const file = join(t.dir, 'docs.txt');
  writeFileSync(file, 'a\nb\n\nc\n\n');
  const r = await run(['embed', '--file', file, '--model', 'local/embed']);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('note: 1 blank line skipped (line 3): an "index" counts the inputs, not the lines\n');
  expect((JSON.parse(r.stdout) as { data: unknown[] }).data).toHaveLength(3);
  // Blank lines after the last input (a file's last line end) shift nothing; --quiet keeps it quiet.
  writeFileSync(file, 'a\nb\n\n\n');
  expect((await run(['embed', '--file', file, '--model', 'local/embed'])).stderr).toBe('');
  writeFileSync(file, '\na\n\nb\n');
  expect((await run(['embed', '--file', file, '--model', 'local/embed', '--jsonl'])).stderr).toBe('note: 2 blank lines skipped (lines 1, 3): an "index" counts the inputs, not the lines\n');
  expect((await run(['embed', '--file', file, '--model', 'local/embed', '--quiet'])).stderr).toBe('');
});

it('usage --activity with nothing recorded says why: today\'s calls show tomorrow, and router usage counts them now', async () => {
  expect((await run(['chat', '--model', 'local/echo', 'hi'])).code).toBe(0);
  const r = await run(['usage', '--activity'], { ROUTER_MANAGEMENT_KEY: t.managementKey });
  expect(r.code, r.stderr).toBe(0);
  // Was: a total of zero calls, exit 0 and nothing said, right after a call.
  expect(r.stdout).toBe('total\t0\t0\t0\t0\t0.000000\n');
  expect(r.stderr).toBe('note: the service recorded no activity in these days: it holds completed UTC days, so today\'s calls show tomorrow (router usage, without --activity, counts them now)\n');
});

it('a tool script without its execute bit is said as not runnable (exit 126), not as a command not found', async () => {
  const script = join(t.dir, 'weather.sh');
  writeFileSync(script, '#!/bin/sh\necho rainy\n', { mode: 0o644 });
  for (const command of [[script], script]) {
    const tools = join(t.dir, 'weather.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, command }]));
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'weather']);
    expect(r.code).toBe(0);
    // Was (argv form): "its command was not found (exit 127)" for a file that is there.
    expect(r.stderr, JSON.stringify(command)).toBe('warning: tool weather: its command could not be run (exit 126): is it executable (chmod +x)?\n');
  }
  const tools = join(t.dir, 'weather.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, command: [script] }]));
  expect((await run(['chat', '--model', 'local/tools', '--tools', tools, 'weather'])).stdout).toContain(`EACCES (${script} is not executable)`);
});

it('a mistyped model under a budget or --max-cost is the usage error it is without one (exit 2, a guess), not a refusal of money', async () => {
  t.clearRequests();
  const budget = await run(['chat', '--model', 'local/lorme', 'hi'], { ROUTER_DAILY_BUDGET: '2' });
  // Was: exit 4, "cannot bound the cost of this call for what is left of daily_budget …: local/lorme is not in the model list".
  expect(budget).toMatchObject({ code: 2, stdout: '', stderr: 'error: local/lorme is not in the model list (did you mean local/lorem? the list: router models): nothing was sent\n' });
  const capped = await run(['embed', '--model', 'local/embd', '--max-cost', '1', 'hi']);
  expect(capped).toMatchObject({ code: 2, stderr: 'error: local/embd is not in the model list (did you mean local/embed? the list: router models): nothing was sent\n' });
  expect(t.requests().filter((q) => q.method === 'POST')).toEqual([]);
  // Without a cap the service says it: the same exit code.
  expect((await run(['chat', '--model', 'local/lorme', 'hi'])).code).toBe(2);
});

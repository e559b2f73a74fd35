import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { runInProcess, testStreams, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { until } from '../support/until.js';

// --max-cost, --dry-run and budgets, in this process against an emulator over real HTTP.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let stateDir: string;

emulatorPerFile('router-spend-', (f) => ({ emu, dir, env } = f));
beforeEach(() => {
  stateDir = join(dir, `state-${Math.random().toString(36).slice(2)}`);
  mkdirSync(stateDir);
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ROUTER_STATE_DIR: stateDir, ...o.env } });
const sent = (path: string) => emu.requestLog.filter((r) => r.path.endsWith(path));
const lastBody = (path: string) => sent(path).at(-1)!.body as Record<string, unknown>;

describe('--max-cost', () => {
  it('lowers max tokens to what the cap allows, and --usage shows the reported cost beside the bound', async () => {
    const r = await run(['chat', '--model', 'local/lorem', '--max-cost', '0.0005', '--usage', 'write 2000 words']);
    expect(r.code).toBe(0);
    const limit = lastBody('/chat/completions').max_completion_tokens as number;
    // local/lorem: $5e-7 a prompt token, $1.5e-6 a completion token; the prompt bound is the body's bytes.
    expect(limit).toBeGreaterThan(250);
    expect(limit).toBeLessThan(333);
    const m = /cost \$([\d.]+) \(bound \$([\d.]+)\)/.exec(r.stderr)!;
    expect(Number(m[1])).toBeLessThanOrEqual(Number(m[2]));
    expect(Number(m[2])).toBeLessThanOrEqual(0.0005);
  });

  it('holds for every shape of answer: reasoning, an image, a schema answer cost no more than the bound', async () => {
    // Caps that leave room for a few tokens, not for the whole answer (an image is 1,000).
    for (const args of [
      ['--max-cost', '0.001', '--model', 'local/painter', '--modalities', 'text,image', 'a red fox'],
      ['--max-cost', '0.00035', '--model', 'local/thinker', 'why is the sky blue'],
      ['--max-cost', '0.0002', '--model', 'local/lorem', '--schema', '{"type":"object","properties":{"words":{"type":"array","items":{"type":"string"}}},"required":["words"]}', 'words'],
    ]) {
      const r = await run(['chat', '--usage', ...args]);
      const m = /cost \$([\d.]+) \(bound \$([\d.]+)\)/.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      expect(Number(m![1]), r.stderr).toBeLessThanOrEqual(Number(m![2]));
    }
  });

  it('a cap the call fits leaves max tokens as they were', async () => {
    expect((await run(['chat', '--model', 'local/echo', '--max-cost', '5', 'hi'])).code).toBe(0);
    expect(lastBody('/chat/completions').max_completion_tokens).toBeUndefined();
  });

  it('with fallback models, the dearest sets the limit', async () => {
    await run(['chat', '--model', 'local/lorem', '--max-cost', '0.0005', 'hi']);
    const alone = lastBody('/chat/completions').max_completion_tokens as number;
    await run(['chat', '--model', 'local/lorem', '--models', 'local/echo', '--max-cost', '0.0005', 'hi']);
    const withEcho = lastBody('/chat/completions').max_completion_tokens as number;
    expect(withEcho).toBeLessThan(alone * 0.8);
  });

  it('refuses, exit 4 and nothing sent, when an explicit --max-tokens or even one token does not fit', async () => {
    const before = sent('/chat/completions').length;
    const explicit = await run(['chat', '--model', 'local/lorem', '--max-cost', '0.0005', '--max-tokens', '5000', 'hi']);
    expect(explicit.code).toBe(4);
    expect(explicit.stderr).toMatch(/^error: this call could cost up to \$0\.00\d+, over --max-cost \$0\.0005: --max-tokens 5000 does not fit; \d+ or fewer would\n$/);
    const tiny = await run(['chat', '--model', 'local/lorem', '--max-cost', '0.00001', 'hi']);
    expect(tiny.code).toBe(4);
    expect(tiny.stderr).toMatch(/not even one completion token fits/);
    expect(sent('/chat/completions').length).toBe(before);
  });

  it('an explicit --max-tokens that does not fit names the fewer that would, sized with its own digits', async () => {
    // local/echo: $2 per million completion tokens. A cap just below the bound of 5 leaves room for 4.
    const first = await run(['chat', '--model', 'local/echo', '--max-cost', '0.000001', '--max-tokens', '5', 'hello there number 1']);
    const bound = Number(/could cost up to \$([\d.]+)/.exec(first.stderr)?.[1]);
    const cap = (bound - 0.000001).toFixed(7);
    const r = await run(['chat', '--model', 'local/echo', '--max-cost', cap, '--max-tokens', '5', 'hello there number 1']);
    expect(r.code).toBe(4);
    const fewer = /--max-tokens 5 does not fit; (\d+) or fewer would\n$/.exec(r.stderr);
    expect(fewer, r.stderr).not.toBeNull();
    // What it names is taken under that cap.
    expect((await run(['chat', '--model', 'local/echo', '--max-cost', cap, '--max-tokens', fewer![1]!, 'hello there number 1'])).code).toBe(0);
  });

  it('a refusal for want of one token quotes a prompt cost that leaves no room for one (not one under the cap)', async () => {
    const cap = 0.00005;
    const r = await run(['chat', '--model', 'local/lorem', '--max-cost', String(cap), 'write 50 words']);
    expect(r.code).toBe(4);
    const quoted = Number(/not even one completion token fits \(the prompt alone may cost \$([\d.]+)\)/.exec(r.stderr)?.[1]);
    // local/lorem: $1.50 per million completion tokens.
    expect(quoted + 0.0000015).toBeGreaterThan(cap);
  });

  it('refuses a model not in the list as the service would, a usage error with the list named (exit 2), nothing sent', async () => {
    const r = await run(['chat', '--model', 'local/nothing', '--max-cost', '1', 'hi']);
    expect(r).toMatchObject({ code: 2, stderr: 'error: local/nothing is not in the model list (the list: router models): nothing was sent\n' });
  });

  it('caps responses, embed, speak and decide too', async () => {
    expect((await run(['responses', '--model', 'local/lorem', '--max-cost', '0.0005', 'write 2000 words'])).code).toBe(0);
    expect(lastBody('/responses').max_output_tokens).toBeLessThan(333);
    const embed = await run(['embed', '--model', 'local/embed', '--max-cost', '0.0000001', 'a'.repeat(50)]);
    expect(embed).toMatchObject({ code: 4 });
    expect(embed.stderr).toMatch(/^error: this call could cost up to \$0\.000002, over --max-cost \$0\.0000001\n$/);
    const speak = await run(['speak', '--model', 'local/tts', '--voice', 'alloy', '--max-cost', '0.0001', 'Hello there, this is a longer text.']);
    expect(speak.code).toBe(4);
    expect(speak.stdout).toBe('');
    const decide = await run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'a', 'is it?', '--max-cost', '0.001']);
    expect(decide.code).toBe(4);
    expect(decide.stderr).toMatch(/over --max-cost/);
  });

  it('refuses responses --tools, whose server-tool loop no bound can foresee', async () => {
    const tools = join(stateDir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'web_search' }]));
    const r = await run(['responses', '--model', 'local/echo', '--tools', tools, '--max-cost', '1', 'hi']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: cannot bound the cost of this call for --max-cost \$1\.00: the service runs the tools of its own \(web_search, …\) in a loop .*\(let the call through: no --max-cost, and --ignore-budget under a budget; --stop-when max_cost=USD asks the service to stop it\)\n$/);
  });

  it('is refused with chat -i, where it would cap nothing', async () => {
    expect(await run(['chat', '-i', '--max-cost', '1'])).toMatchObject({ code: 2, stderr: 'error: --max-cost applies to one call, not to chat -i\n' });
  });

  it('is refused as a usage error when it is not an amount', async () => {
    expect(await run(['chat', '--max-cost', '-1', 'hi'])).toMatchObject({ code: 2, stderr: 'error: --max-cost is an amount of USD such as 2 or 0.50, got "-1"\n' });
  });
});

describe('--dry-run', () => {
  it('prints the body and its bound, and sends no call', async () => {
    const before = sent('/chat/completions').length;
    const r = await run(['chat', '--model', 'local/echo', '--dry-run', '--max-tokens', '100', 'hi']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ messages: [{ role: 'user', content: 'hi' }], model: 'local/echo', max_completion_tokens: 100, stream: true, stream_options: { include_usage: true } });
    const whole = await run(['chat', '--model', 'local/echo', '--dry-run', '--json', 'hi']);
    expect(JSON.parse(whole.stdout)).toEqual({ messages: [{ role: 'user', content: 'hi' }], model: 'local/echo' });
    expect(r.stderr).toMatch(/^cost bound: \$0\.000\d+ \(prompt ≤ \d+ tokens, completion ≤ 100 tokens, at the prices of local\/echo\)\n$/);
    expect(sent('/chat/completions').length).toBe(before);
  });

  it('works for embed and decide', async () => {
    const e = await run(['embed', '--model', 'local/embed', '--dry-run', 'one', 'two']);
    expect(JSON.parse(e.stdout)).toMatchObject({ input: ['one', 'two'], model: 'local/embed' });
    expect(e.stderr).toMatch(/^cost bound: /);
    const d = await run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'a', 'is it?', '--dry-run']);
    expect(JSON.parse(d.stdout)).toMatchObject({ model: 'local/judge', state: 'x' });
  });
});

function ledger(lines: object[]): void {
  writeFileSync(join(stateDir, 'usage.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

describe('budgets', () => {
  // The time a line is written, not the file's collection: a test run after a day turned writes that day's spend.
  const today = (cost: number, extra: object = {}) => ({ time: new Date().toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', cost, ...extra });

  it('a reached daily budget refuses the call (exit 4) naming it, what was spent and when it resets', async () => {
    ledger([today(0.3), today(0.25), today(9, { profile: 'other' }), { ...today(5), time: '2020-01-01T00:00:00.000Z' }]);
    const before = sent('/chat/completions').length;
    const r = await run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_DAILY_BUDGET: '0.5' } });
    expect(r.code).toBe(4);
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString();
    expect(r.stderr).toBe(`error: daily_budget of $0.50 reached (ROUTER_DAILY_BUDGET): $0.550000 spent today (UTC); it resets at ${tomorrow} (--ignore-budget for one call)\n`);
    expect(sent('/chat/completions').length).toBe(before);
    expect((await run(['chat', '--model', 'local/echo', '--ignore-budget', 'hi'], { env: { ROUTER_DAILY_BUDGET: '0.5' } })).code).toBe(0);
  });

  it('a batch counts once, with its latest record; a monthly budget from the profile caps the call as --max-cost does', async () => {
    ledger([today(0.2, { batch_id: 'b1' }), today(0.2, { batch_id: 'b1' }), today(0.05)]);
    const config = { ROUTER_CONFIG_DIR: join(stateDir, 'config') };
    expect((await run(['config', 'set', 'monthly_budget', '0.2505'], { env: config })).code).toBe(0);
    const r = await run(['chat', '--model', 'local/lorem', 'write 2000 words'], { env: config });
    expect(r.code).toBe(0);
    expect(lastBody('/chat/completions').max_completion_tokens).toBeLessThan(333);
  });

  it('with logging off, says once that the budget cannot be kept', async () => {
    const r = await run(['--no-log', 'chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_MONTHLY_BUDGET: '3' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('warning: with logging off this call is not in the usage ledger, so monthly_budget cannot be kept\n');
  });

  it('chat -i holds each turn to the budget at the prices of its fallback models too, as a one-shot chat does', async () => {
    // local/echo alone fits $0.01 at 1000 tokens; local/painter, a fallback, costs $30 a million completion tokens.
    const flags = ['--model', 'local/echo', '--models', 'local/painter', '--max-tokens', '1000'];
    const budget = { ROUTER_DAILY_BUDGET: '0.01' };
    const before = sent('/chat/completions').length;
    const once = await run(['chat', ...flags, 'hi'], { env: budget });
    expect(once.code).toBe(4);
    // The budget is named with where it was set, as a reached one is.
    expect(once.stderr).toMatch(/^error: this call could cost up to \$0\.03\d+, over what is left of daily_budget \(\$0\.0\d+, ROUTER_DAILY_BUDGET\): /);
    const config = { ROUTER_CONFIG_DIR: join(stateDir, 'config') };
    expect((await run(['config', 'set', 'monthly_budget', '0.01'], { env: config })).code).toBe(0);
    expect((await run(['chat', ...flags, 'hi'], { env: config })).stderr).toMatch(/over what is left of monthly_budget \(\$0\.0\d+, monthly_budget of profile "default"\): /);
    const t = testStreams({ env: { ...env, ROUTER_STATE_DIR: stateDir, ...budget, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
    const keys = new PassThrough();
    t.streams.stdin = keys;
    const repl = main(['node', 'router', 'chat', '-i', ...flags], t.streams);
    keys.write('hi\n');
    // The refusal (or a call sent: the defect), not 5 s of polls that a loaded machine can pass first.
    await until(() => /error:/.test(t.stderr()) || sent('/chat/completions').length !== before);
    keys.write('/exit\n');
    expect(await repl).toBe(0);
    expect(t.stderr()).toMatch(/error: this call could cost up to \$0\.03\d+, over what is left of daily_budget/);
    expect(sent('/chat/completions').length).toBe(before);
  });

  it('config set refuses a budget that is not an amount', async () => {
    expect(await run(['config', 'set', 'daily_budget', 'lots'])).toMatchObject({ code: 2, stderr: 'error: daily_budget is an amount of USD such as 2 or 0.50, got "lots"\n' });
  });
});

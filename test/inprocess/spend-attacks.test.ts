import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// Spend guardrails, `router usage`, `router models` and `router credits` attacked as a new user
// would: odd ledgers and caches, the tool loop under a cap, --dry-run with --jq. Over real HTTP.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let stateDir: string;

emulatorPerFile('router-spend-attacks-', (f) => ({ emu, dir, env } = f));
beforeEach(() => {
  stateDir = join(dir, `state-${Math.random().toString(36).slice(2)}`);
  mkdirSync(stateDir);
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ROUTER_STATE_DIR: stateDir, ...o.env } });

describe('router usage over an odd ledger', () => {
  // The time a line is written, not the file's collection: a test run after a day turned writes that day's spend.
  const record = (cost: number, extra: object = {}) => JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, cost, ...extra });

  it('sums as it reads: a batch once at its latest record, CRLF lines, damaged and over-long lines skipped; the total row matches the rows', async () => {
    const long = record(100, { id: 'x'.repeat(100_000) });
    const edited = record(0, { cost: '0.5', prompt_tokens: '7', command: 'edited' });
    const lines = [record(0.0000014999999999), record(1, { batch_id: 'b1' }), 'not json', `${record(0.5)}\r`, long, record(2, { batch_id: 'b1' }), 'null', '"text"', edited, record(9, { time: 'yesterday' })];
    writeFileSync(join(stateDir, 'usage.jsonl'), `${lines.join('\n')}\n`);
    const json = await run(['usage', '--json'], { env: { ROUTER_MONTHLY_BUDGET: '10' } });
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout) as { total: { calls: number; cost: number }; budgets: { spent: number }[] };
    // The hand-edited line (a cost as text) is damaged now: said and not counted, not a call of cost 0.
    expect(out.total).toMatchObject({ calls: 3, prompt_tokens: 3, cost: 2.5000015 });
    expect(out.budgets[0]!.spent).toBe(2.5000015);
    const piped = await run(['usage', '--by', 'command']);
    const [row, total] = piped.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(row!.slice(1)).toEqual(['3', '3', '6', '9', '2.5000015']);
    expect(total).toEqual(['total', '3', '3', '6', '9', '2.5000015']);
    // A time that is no date (line 10) is said too: its $9 is counted by no budget.
    expect(piped.stderr).toMatch(/\(lines 3, 5, 7, 8, 9, 10\) are damaged/);
  });
});

const sent = (path: string) => emu.requestLog.filter((r) => r.path.endsWith(path));

describe('--max-cost over a tool loop', () => {
  const tools = (output: string) => {
    const path = join(stateDir, 'tools.json');
    writeFileSync(path, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: output }]));
    return path;
  };

  it('holds each next round to what is left of the cap: a tool result too long for it is refused (exit 4), not sent', async () => {
    const before = sent('/chat/completions').length;
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools("head -c 200000 /dev/zero | tr '\\0' a"), '--max-cost', '0.01', 'weather in Paris?']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: this call could cost up to \$0\.2\d+, over --max-cost \$0\.01, less the \$0\.0000\d+ this command already spent: not even one completion token fits/m);
    expect(sent('/chat/completions').length).toBe(before + 1);
  });

  it('a loop that fits goes on, each round within the cap', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools('echo sunny'), '--max-cost', '0.01', '--usage', 'weather in Paris?']);
    expect(r.code).toBe(0);
    const rounds = sent('/chat/completions').slice(-2).map((q) => (q.body as { max_completion_tokens: number }).max_completion_tokens);
    expect(rounds[1]).toBeLessThanOrEqual(rounds[0]!);
    expect(r.stderr).toMatch(/\(bound \$0\.00\d+\)\n$/);
  });
});

describe('a damaged model list cache', () => {
  it('is no cache: entries that are not models, or /dev/zero in its place, are fetched again, never an internal error', async () => {
    const { catalogPath } = await import('../../src/cli/service/model-catalog.js');
    const { symlinkSync } = await import('node:fs');
    const path = catalogPath({ ROUTER_STATE_DIR: stateDir }, emu.apiRoot);
    mkdirSync(join(stateDir, 'models'));
    writeFileSync(path, JSON.stringify({ api_root: emu.apiRoot, fetched_at: Date.now(), models: [1, null, 'x', { id: 5 }] }));
    for (const args of [['models', 'echo'], ['models', 'show', 'local/echo'], ['chat', '--model', 'local/echo', '--dry-run', '--max-cost', '1', 'hi']]) {
      const r = await run(args);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.code).toBe(0);
    }
    rmSync(path);
    symlinkSync('/dev/zero', path);
    const r = await run(['models', 'lorem']);
    expect(r).toMatchObject({ code: 0, stdout: 'local/lorem\tlocal/lorem\t524288\t0.50\t1.50\ttext->text\n' });
  });
});

describe('--dry-run with --json FIELDS and --jq', () => {
  it('shapes the body printed as any JSON of the command is shaped; batch create --dry-run --json prints JSON', async () => {
    const jq = await run(['chat', '--model', 'local/echo', '--dry-run', '--max-cost', '0.001', '--jq', '.max_completion_tokens', 'hi']);
    expect(jq.code).toBe(0);
    expect(jq.stdout).toMatch(/^\d+\n$/);
    expect(await run(['chat', '--model', 'local/echo', '--dry-run', '--json', 'model', 'hi'])).toMatchObject({ code: 0, stdout: '{"model":"local/echo"}\n' });
    expect((await run(['embed', '--model', 'local/embed', '--dry-run', '--jq', '.input', 'a', 'b'])).stdout).toBe('["a","b"]\n');
    const file = join(stateDir, 'requests.jsonl');
    writeFileSync(file, `${JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } })}\n`);
    const batch = await run(['batch', 'create', file, '--model', 'local/echo', '--dry-run', '--json']);
    expect(batch.code).toBe(0);
    expect(JSON.parse(batch.stdout)).toMatchObject({ requests: 1, endpoint: '/v1/chat/completions', model: 'local/echo', cost_bound: { model: 'local/echo', requests: 1, unlimited: 0 } });
    // The bound as the rest of the JSON reads: snake_case keys, and dollars without float noise.
    writeFileSync(file, ['hi', 'hello there'].map((content, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content }] } })).join('\n') + '\n');
    for (const args of [['batch', 'create', file], ['batch', 'run', file]]) {
      const bound = JSON.parse((await run([...args, '--model', 'local/echo', '--dry-run', '--json'])).stdout).cost_bound;
      expect(Object.keys(bound).sort()).toEqual(['bound', 'max_completion_tokens', 'model', 'requests', 'spent', 'unlimited']);
      expect(bound).toMatchObject({ requests: 2, unlimited: 2, spent: 0, max_completion_tokens: expect.any(Number) });
      expect(String(bound.bound)).toMatch(/^0\.\d{1,10}$/);
    }
  });
});

describe('router credits with a key that is not valid', () => {
  it('names the management key, not the API key, when the management key is refused (401)', async () => {
    const r = await run(['credits'], { env: { ROUTER_MANAGEMENT_KEY: 'sk-rt-mgmt-0000000000000000000000000000000000000000' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('error: credits need a management key (the management key is not valid): export ROUTER_MANAGEMENT_KEY=…, or printf %s "$KEY" | router config set management_key\n');
  });
});

describe('router models on a narrow terminal', () => {
  it('shortens names, not the prices: at 60 columns every price is in sight', async () => {
    const r = await run(['models'], { tty: { stdout: true }, columns: 60, env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/\$\/M prompt {2}\$\/M completion/);
    expect(lines.find((l) => l.startsWith('local/painter'))).toMatch(/ 2\.00 +30\.00 /);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
  });
});

describe('router models with a filter value no model has', () => {
  it('a typo of a value the list has is refused (exit 2) with the value meant; another just matches nothing', async () => {
    expect(await run(['models', '--supports', 'tool'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: --supports tool: no model in the list supports it (did you mean tools?)\n' });
    expect(await run(['models', '--input-modality', 'images'])).toMatchObject({ code: 2, stderr: 'error: --input-modality images: no model in the list takes it (did you mean image?)\n' });
    expect(await run(['models', '--input-modality', 'video'])).toMatchObject({ code: 1, stdout: '' });
    expect(await run(['models', '--supports', 'tools'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^local\/tools\t/) });
  });
});

describe('--max-cost and a role that sets max tokens', () => {
  it('a refusal names the role that set the limit, not a flag that was not typed', async () => {
    const config = { ROUTER_CONFIG_DIR: join(stateDir, 'config') };
    expect((await run(['roles', 'save', 'short', '--system', 'be brief', '--max-tokens', '4000', '--model', 'local/lorem'], { env: config })).code).toBe(0);
    const r = await run(['chat', '--role', 'short', '--max-cost', '0.001', 'hi'], { env: config });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/over --max-cost \$0\.001: role short's --max-tokens 4000 does not fit; \d+ or fewer would\n$/);
    const typed = await run(['chat', '--role', 'short', '--max-tokens', '5000', '--max-cost', '0.001', 'hi'], { env: config });
    expect(typed.stderr).toMatch(/: --max-tokens 5000 does not fit/);
  });
});

describe('a model list that cannot be read under a cap', () => {
  it('fails with that failure\'s own exit code (a refused key: 3; no service: 8), not as over the cap (4)', async () => {
    const key = await run(['chat', '--model', 'local/echo', '--max-cost', '1', 'hi'], { env: { ROUTER_API_KEY: 'sk-rt-v1-0000000000000000000000000000000000000000' } });
    expect(key.code).toBe(3);
    const down = await run(['--max-retries', '0', 'chat', '--model', 'local/echo', '--max-cost', '1', 'hi'], { env: { ROUTER_API_ROOT: 'http://127.0.0.1:1/api' } });
    expect(down.code).toBe(8);
    expect(down.stderr).toMatch(/^error: connection refused/);
    const file = join(stateDir, 'requests.jsonl');
    writeFileSync(file, `${JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } })}\n`);
    expect((await run(['batch', 'create', file, '--model', 'local/echo', '--max-cost', '1'], { env: { ROUTER_API_ROOT: 'http://127.0.0.1:1/api' } })).code).toBe(8);
    const dry = await run(['chat', '--model', 'local/echo', '--dry-run', 'hi'], { env: { ROUTER_API_ROOT: 'http://127.0.0.1:1/api' } });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toMatch(/^cost bound: unknown \(the model list could not be read \(connection refused/);
  });
});

describe('batch run --retry-failed under --max-cost', () => {
  it('the retries are held to the cap: refused (exit 4), nothing submitted, and no retry left behind for a later run', async () => {
    const file = join(stateDir, 'some-fail.jsonl');
    const line = (id: string, extra: object = {}) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, ...extra } });
    writeFileSync(file, `${line('a')}\n${line('b', { temperature: 5 })}\n`);
    const first = await run(['batch', 'run', file, '--model', 'local/lorem', '--watch', '--interval', '0.05']);
    expect(first.code).toBe(0);
    const id = /job (job_\w+)/.exec(first.stderr)![1]!;
    const before = sent('/batches').length;
    const refused = await run(['batch', 'run', '--resume', id, '--retry-failed', '--max-cost', '0.0000001', '--watch', '--interval', '0.05']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/this batch could cost up to \$0\.0000\d+ .*over --max-cost \$0\.0000001: nothing was submitted/);
    expect(sent('/batches').length).toBe(before);
    const shown = await run(['batch', 'job', id, '--json']);
    expect((JSON.parse(shown.stdout) as { shards: unknown[] }).shards).toHaveLength(1);
  });
});

describe('a ledger that is a folder', () => {
  it('is one line naming it (usage, and a call held to a budget), exit 2', async () => {
    mkdirSync(join(stateDir, 'usage.jsonl'));
    const line = `error: usage ledger ${join(stateDir, 'usage.jsonl')}: is a folder: move it away\n`;
    expect(await run(['usage'])).toMatchObject({ code: 2, stdout: '', stderr: line });
    expect(await run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_DAILY_BUDGET: '1' } })).toMatchObject({ code: 2, stderr: line });
  });
});

describe('a ledger that is a device or a FIFO', () => {
  it('is refused in one line under a budget, nothing sent (/dev/null kept no spend, /dev/zero spun for ever); without one the call goes and the ledger line is said lost', async () => {
    const ledger = join(stateDir, 'usage.jsonl');
    const line = `error: usage ledger ${ledger}: cannot read it (not a regular file (a device, a FIFO or a socket))\n`;
    for (const device of ['/dev/null', '/dev/zero', '/dev/full', 'fifo']) {
      rmSync(ledger, { force: true });
      if (device === 'fifo') execFileSync('mkfifo', [ledger]);
      else symlinkSync(device, ledger);
      const before = emu.requestLog.length;
      expect(await run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_DAILY_BUDGET: '1' } }), device).toMatchObject({ code: 2, stdout: '', stderr: line });
      expect(await run(['usage']), device).toMatchObject({ code: 2, stdout: '', stderr: line });
      expect(emu.requestLog.length, device).toBe(before);
      const free = await run(['--verbose', 'chat', '--model', 'local/echo', 'hi']);
      expect(free, device).toMatchObject({ code: 0, stdout: 'hi\n' });
      expect(free.stderr, device).toContain(`warning: the usage ledger ${ledger} could not be written (not a regular file (a device, a FIFO or a socket))`);
    }
  });
});

describe('a batch seen again long after it ended', () => {
  it('counts when it was first seen ended: a later batch get does not move its spend into today', async () => {
    const long = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const now = new Date().toISOString();
    const batch = (time: string) => JSON.stringify({ time, profile: 'default', command: 'batch get', endpoint: '/v1/batches', model: 'local/echo', batch_id: 'batch_old', cost: 3 });
    writeFileSync(join(stateDir, 'usage.jsonl'), `${batch(long)}\n${batch(now)}\n`);
    const usage = JSON.parse((await run(['usage', '--json'], { env: { ROUTER_DAILY_BUDGET: '1' } })).stdout) as { total: { calls: number }; budgets: { spent: number }[] };
    expect(usage.total.calls).toBe(0);
    expect(usage.budgets[0]!.spent).toBe(0);
    expect((await run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_DAILY_BUDGET: '1' } })).code).toBe(0);
    const all = JSON.parse((await run(['usage', '--json', '--since', '60d', '--by', 'day'])).stdout) as { rows: { key: string; cost: number }[] };
    expect(all.rows.find((r) => r.cost === 3)?.key).toBe(long.slice(0, 10));
  });
});

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// router models, router credits, usage against budgets and batch estimates, over real HTTP.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let stateDir: string;

emulatorPerFile('router-models-', (f) => ({ emu, dir, env } = f));
beforeEach(() => {
  stateDir = join(dir, `state-${Math.random().toString(36).slice(2)}`);
  mkdirSync(stateDir);
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ROUTER_STATE_DIR: stateDir, ...o.env } });
const listCalls = () => emu.requestLog.filter((r) => r.method === 'GET' && r.path.endsWith('/v1/models')).length;

describe('router models', () => {
  it('piped: one tab-separated line per model, prices per million tokens and modalities', async () => {
    const r = await run(['models']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain('local/echo\tlocal/echo\t524288\t1.00\t2.00\ttext->text');
    expect(lines).toContain('local/embed\tlocal/embed\t131072\t0.02\t0.00\ttext->embeddings');
  });

  it('searches id and name by words, filters by modality and parameter, sorts', async () => {
    expect((await run(['models', 'LOREM'])).stdout).toBe('local/lorem\tlocal/lorem\t524288\t0.50\t1.50\ttext->text\n');
    const audio = await run(['models', '--output-modality', 'speech', '--sort', 'price']);
    expect(audio.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0])).toEqual(['local/tts-basic', 'local/tts']);
    const json = await run(['models', '--supports', 'tools', '--supports', 'seed', '--sort', 'name']);
    expect(json.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0])).toEqual(['local/tools']);
    expect((await run(['models', '--input-modality', 'image'])).stdout.split('\t')[0]).toBe('local/vision');
    expect(await run(['models', '--input-modality', 'video'])).toMatchObject({ code: 1, stdout: '', stderr: 'error: --input-modality video: no model in the list takes it\n' });
  });

  it('is kept five minutes in the state folder: the second run fetches nothing, --refresh does', async () => {
    await run(['models']);
    const before = listCalls();
    await run(['models', 'echo']);
    expect(listCalls()).toBe(before);
    expect(readdirSync(join(stateDir, 'models'))).toHaveLength(1);
    await run(['models', '--refresh']);
    expect(listCalls()).toBe(before + 1);
  });

  it('--json FIELDS and --jq, as other commands', async () => {
    const r = await run(['models', '--json', 'id,pricing', 'judge']);
    expect(JSON.parse(r.stdout)).toEqual([{ id: 'local/judge', pricing: { prompt: '0.0000003', completion: '0.000001' } }]);
    expect((await run(['models', '--jq', '.[0].id'])).stdout).toBe('local/echo\n');
  });

  it('a terminal gets a table with a header', async () => {
    const r = await run(['models', 'echo'], { tty: { stdout: true, stderr: true }, columns: 120 });
    // The head in bold: a terminal, color not turned off (NO_COLOR empty).
    expect(r.stdout.split('\n')[0]).toMatch(/^\x1b\[1mid\s+name\s+context\s+\$\/M prompt\s+\$\/M completion\s+modalities\x1b\[22m$/);
  });

  it('models show: one model whole; an unknown id is exit 5 with the nearest', async () => {
    const r = await run(['models', 'show', 'local/echo']);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'local/echo', top_provider: { max_completion_tokens: 262144 } });
    expect(await run(['models', 'show', 'local/ecko'])).toMatchObject({ code: 5, stderr: 'error: no model local/ecko in the list (did you mean local/echo?): see router models\n' });
  });

  it('models show takes --json FIELDS, --jq and --refresh typed after it (not left to models, which ignored them)', async () => {
    expect(await run(['models', 'show', 'local/echo', '--jq', '.id'])).toMatchObject({ code: 0, stdout: 'local/echo\n' });
    expect(JSON.parse((await run(['models', 'show', 'local/echo', '--json', 'id,context_length'])).stdout)).toEqual({ id: 'local/echo', context_length: 524288 });
    // No model answers more than its context holds.
    const listed = JSON.parse((await run(['models', '--json'])).stdout) as { id: string; context_length: number; top_provider: { context_length: number; max_completion_tokens: number | null } }[];
    for (const m of listed) expect(m.top_provider.max_completion_tokens ?? 0, m.id).toBeLessThan(Math.min(m.context_length, m.top_provider.context_length));
    expect(JSON.parse((await run(['models', 'show', '--json=id', 'local/echo'])).stdout)).toEqual({ id: 'local/echo' });
    const before = emu.requestLog.length;
    const bad = await run(['models', 'show', 'local/echo', '--json=idd']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: unknown JSON field "idd".*did you mean id\?/);
    expect(emu.requestLog.length).toBe(before);
    const kept = listCalls();
    expect((await run(['models', 'show', 'local/echo', '--refresh'])).code).toBe(0);
    expect(listCalls()).toBe(kept + 1);
  });

  it('completions of --model read the kept list too', async () => {
    await run(['models']);
    const before = listCalls();
    const r = await run(['__complete', 'models']);
    expect(r.stdout.split('\n')).toContain('local/tts-basic');
    expect(listCalls()).toBe(before);
  });

  it('a refused model id suggests from the kept list', async () => {
    await run(['models']);
    const before = listCalls();
    const r = await run(['chat', '--model', 'local/lorme', 'hi']);
    expect(r.stderr).toBe('error: POST /api/v1/chat/completions: 400 Bad Request: local/lorme is not a valid model ID (did you mean local/lorem? The list: router models)\n');
    expect(listCalls()).toBe(before);
  });
});

describe('router credits', () => {
  it('the credits, the usage and the balance; --json', async () => {
    const r = await run(['credits', '--json']);
    expect(r.code).toBe(0);
    const c = JSON.parse(r.stdout);
    expect(c.balance).toBeCloseTo(c.total_credits - c.total_usage, 9);
    expect((await run(['credits'])).stdout).toMatch(/^\d+(\.\d+)?\t\d+(\.\d+)?\t\d+(\.\d+)?\n$/);
  });

  it('sums of costs carry no float noise, and a balance spent to the last cent is 0, never -2.7e-17', async () => {
    const { workspace, managementKey } = emu.store.createWorkspace(undefined, 0.3);
    // 0.1 + 0.1 + 0.1 is 0.30000000000000004 in doubles.
    for (let i = 0; i < 3; i++) emu.store.debit(workspace.id, 0.1);
    const r = await run(['credits', '--json'], { env: { ROUTER_MANAGEMENT_KEY: managementKey } });
    expect(JSON.parse(r.stdout)).toEqual({ total_credits: 0.3, total_usage: 0.3, balance: 0 });
    expect(emu.store.balance(workspace.id)).toBe(0);
    emu.store.refund(workspace.id, 0.1);
    emu.store.topUp(workspace.id, 0.2);
    expect((await run(['credits'], { env: { ROUTER_MANAGEMENT_KEY: managementKey } })).stdout).toBe('0.5\t0.2\t0.3\n');
    // A tiny usage in decimals, piped as on a terminal: 0.00000002, not 2e-8.
    emu.store.debit(workspace.id, 2e-8);
    expect((await run(['credits'], { env: { ROUTER_MANAGEMENT_KEY: managementKey } })).stdout).toBe('0.5\t0.20000002\t0.29999998\n');
  });

  it('a standard key gets the 403 explained in one line, exit 3', async () => {
    const r = await run(['credits'], { env: { ROUTER_MANAGEMENT_KEY: '' } });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toBe('error: credits need a management key (this is the standard API key): export ROUTER_MANAGEMENT_KEY=…, or printf %s "$KEY" | router config set management_key\n');
  });
});

describe('usage and budgets', () => {
  it('shows today\'s and this month\'s spend against the budgets', async () => {
    expect((await run(['chat', '--model', 'local/echo', 'hello there'])).code).toBe(0);
    const r = await run(['usage', '--json', '--jq', '.budgets'], { env: { ROUTER_DAILY_BUDGET: '1', ROUTER_MONTHLY_BUDGET: '20' } });
    const budgets = JSON.parse(r.stdout);
    expect(budgets.map((b: { name: string }) => b.name)).toEqual(['daily_budget', 'monthly_budget']);
    expect(budgets[0].spent).toBeGreaterThan(0);
    expect(budgets[0].left).toBeCloseTo(1 - budgets[0].spent, 9);
    const tty = await run(['usage'], { env: { ROUTER_DAILY_BUDGET: '1' }, tty: { stdout: true } });
    expect(tty.stdout).toMatch(/daily_budget: \$0\.0000\d+ of \$1\.000000 spent today \(UTC\), \$0\.99\d+ left; resets \d{4}-\d\d-\d\dT00:00:00\.000Z/);
  });
});

describe('batch estimates', () => {
  const lines = (n: number, extra: object = { max_tokens: 100 }) =>
    Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `q${i}`, body: { model: 'local/echo', messages: [{ role: 'user', content: `question ${i}` }], ...extra } })).join('\n') + '\n';

  it('create --dry-run prints the bound at the batch price and sends nothing', async () => {
    const file = join(stateDir, 'r.jsonl');
    writeFileSync(file, lines(3));
    const before = emu.requestLog.filter((r) => r.path.endsWith('/batches')).length;
    const r = await run(['batch', 'create', file, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const bound = Number(/at most \$([\d.]+) at the batch price/.exec(r.stderr)![1]);
    // Each line: ≤ its body's bytes at $1e-6 plus 100 tokens at $2e-6, half of it.
    expect(bound).toBeGreaterThan(3 * 100 * 2e-6 * 0.5);
    expect(bound).toBeLessThan(3 * (200 * 1e-6 + 100 * 2e-6) * 0.5);
    expect(r.stderr).toMatch(/^cost bound: local\/echo: 3 requests/m);
    expect(emu.requestLog.filter((r) => r.path.endsWith('/batches')).length).toBe(before);
  });

  it('batch run --max-cost and a budget refuse before anything is submitted; the bound fits, it runs', async () => {
    const file = join(stateDir, 'r.jsonl');
    writeFileSync(file, lines(4, {}));
    const before = emu.requestLog.filter((r) => r.path.endsWith('/batches')).length;
    const capped = await run(['batch', 'run', file, '--max-cost', '0.01']);
    expect(capped.code).toBe(4);
    expect(capped.stderr).toMatch(/^error: this batch could cost up to \$\d+\.\d+ \(4 requests to local\/echo at the batch price\), over --max-cost \$0\.01: nothing was submitted; (set|lower) max_tokens on its lines.*, or raise --max-cost\n$/);
    const budget = await run(['batch', 'run', file, '--new'], { env: { ROUTER_DAILY_BUDGET: '0.01' } });
    expect(budget.code).toBe(4);
    expect(budget.stderr).toMatch(/over what is left of daily_budget/);
    expect(emu.requestLog.filter((r) => r.path.endsWith('/batches')).length).toBe(before);
    writeFileSync(file, lines(4));
    expect((await run(['batch', 'run', file, '--max-cost', '0.01', '--watch', '--interval', '0.05'])).code).toBe(0);
  });
});

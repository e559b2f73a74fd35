import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { processAlive } from '../../src/internal/process.js';
import { startedForAll } from '../support/for-all.js';

// What only processes show: separate `router` processes at once under one budget, and a process
// killed with -9 while its call is under way (its hold must not keep the budget).
const t = startedForAll(() => startTestEnv());

// local/lorem at --max-tokens 200: bound $0.000354, cost $0.0003025.
const CALL = ['chat', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words'];
const chats = () => t.requests().filter((r) => r.path === '/v1/chat/completions').length;
const holds = (state: string) => (existsSync(join(state, 'budget-holds')) ? readdirSync(join(state, 'budget-holds')).filter((n) => n.endsWith('.json')) : []);

const wholeHold = (path: string) => {
  try {
    return typeof (JSON.parse(readFileSync(path, 'utf8')) as { usd?: unknown }).usd === 'number';
  } catch {
    return false;
  }
};

type LedgerLine = { cost: number; id?: string; endpoint: string; unsettled?: string; reconciles?: string; real_cost?: number; time?: string; sent_after?: string };

/**
 * After a call killed -9 under a budget: the next call lets its hold go (its bound to the ledger, by its id),
 * then `usage --reconcile` settles it. The ledger's line of the bound, and the line settling it.
 */
async function settledAfterKill(state: string, env: Record<string, string>, id: string, endpoint = '/v1/chat/completions'): Promise<{ bound: LedgerLine; settled: LedgerLine }> {
  expect((await t.run(['chat', '--model', 'local/lorem', '--max-tokens', '5', 'hi'], { env })).code).toBe(0);
  expect((await t.run(['usage', '--reconcile'], { env })).code).toBe(0);
  const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as LedgerLine);
  const bound = lines.find((l) => l.unsettled)!;
  expect(bound).toMatchObject({ id, endpoint });
  const settled = lines.find((l) => l.reconciles === id)!;
  expect(settled).toBeDefined();
  return { bound, settled };
}

/**
 * `router ARGS` under a budget, the emulator holding back what follows the first `after` KiB of its answer (0: the
 * head alone) on `path`, killed -9 once its hold names the answer: the generation id its hold kept.
 */
async function killedAnswering(state: string, env: Record<string, string>, path: string, after: number, args: string[]): Promise<string> {
  await t.admin('faults', { faults: [`held,after=${after},path=${path},times=1`] });
  const child = t.spawn(args, env);
  // Heard from the start: a call that ends by itself (the fault missed it) must fail the wait, not hang the test.
  const closed = new Promise((r) => child.on('close', r));
  // Read without the CLI's lock: a hold being written reads as empty (the CLI itself reads under the lock).
  const held = () => holds(state).flatMap((n) => {
    const text = readFileSync(join(state, 'budget-holds', n), 'utf8');
    return text ? [JSON.parse(text) as { id?: string }] : [];
  });
  try {
    expect(await until(() => held().some((h) => h.id !== undefined))).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await closed;
    await t.admin('faults', { faults: [] });
  }
  return held()[0]!.id!;
}

describe('a budget across processes', () => {
  it('five `router chat` at once under a daily budget that fits two: at most two are sent, the others exit 4', async () => {
    const state = join(t.dir, 'five');
    t.clearRequests();
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008' };
    const runs = await Promise.all([1, 2, 3, 4, 5].map(() => t.run(CALL, { env })));
    expect(runs.map((r) => r.code).sort()).toEqual([0, 0, 4, 4, 4]);
    for (const r of runs.filter((r) => r.code === 4)) expect(r.stderr).toMatch(/^error: this call could cost up to \$0\.000354, over what is left of daily_budget/);
    expect(chats()).toBe(2);
    const spent = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').reduce((sum, l) => sum + (JSON.parse(l) as { cost: number }).cost, 0);
    expect(spent).toBeLessThanOrEqual(0.0008);
    expect(holds(state)).toEqual([]);
  });

  it('kill -9 while a call holds the budget: the next call is not held back by it, and the killed call counts at its bound', async () => {
    const state = join(t.dir, 'killed');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008' };
    // Held until the kill, however long a loaded machine takes to start the call (the hold, not the time, is waited for).
    await t.admin('faults', { faults: ['slow,delay_ms=600000,path=/chat/completions'] });
    try {
      const child = t.spawn(CALL, env);
      // Whole: a hold file seen between its creation and its write is one whose call was never sent (a kill then leaves nothing to count).
      await until(() => holds(state).some((n) => wholeHold(join(state, 'budget-holds', n))));
      expect(holds(state)).toHaveLength(1);
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      expect(holds(state)).toHaveLength(1);
    } finally {
      await t.admin('faults', { faults: [] });
    }
    // The budget fits two bounds: the dead process's hold, kept beside its line, would refuse (or stall) this call.
    const r = await t.run(CALL, { env });
    // All it says: its answer stops at --max-tokens (said, piped too).
    expect(r).toMatchObject({ code: 0, stderr: 'note: the answer was cut at its length limit (200 tokens; --max-tokens N raises it)\n' });
    expect(holds(state)).toEqual([]);
    // The service may have charged what the killed call streamed before the kill: its bound is in the ledger, so a
    // loop of killed calls cannot spend past the budget unseen (before, it was dropped: 30 calls killed mid-stream spent $0.2 under a $0.1 budget).
    const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost: number; command: string; model?: string; unsettled?: string });
    expect(lines).toEqual([
      expect.objectContaining({ command: 'chat', model: 'local/lorem', cost: 0.000354, unsettled: expect.stringMatching(/counted at its bound$/) }),
      expect.objectContaining({ command: 'chat', cost: 0.0003025 }),
    ]);
    const again = await t.run(CALL, { env });
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/^error: this call could cost up to \$0\.000354, over what is left of daily_budget \(\$0\.0001435/);
  });

  it('kill -9 once the answer began: the bound counted carries its id, and `usage --reconcile` settles it to the charge', async () => {
    const state = join(t.dir, 'killed-answering');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    // Without --max-tokens (a bound of cents); its stdout never read, the call stops mid-answer once the pipes are full.
    const child = t.spawn(['chat', '--model', 'local/lorem', 'write 100000 words'], env);
    // Read without the CLI's lock: a hold being written reads as empty (the CLI itself reads under the lock).
  const held = () => holds(state).flatMap((n) => {
    const text = readFileSync(join(state, 'budget-holds', n), 'utf8');
    return text ? [JSON.parse(text) as { id?: string }] : [];
  });
    expect(await until(() => held().some((h) => h.id !== undefined))).toBe(true);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const id = held()[0]!.id!;
    expect(id).toMatch(/^gen-/);
    // The next call lets the dead process's hold go: its bound goes to the ledger, by its id (before: no id, never settled).
    const { bound, settled } = await settledAfterKill(state, env, id);
    expect(settled.real_cost).toBeGreaterThan(0);
    expect(settled.cost).toBeCloseTo(settled.real_cost! - bound.cost, 10);
  });

  it('kill -9 while a whole answer (--no-stream) comes: its head gave the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-whole');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    // Carried out and charged; its head (with x-generation-id) is sent, its body never: the kill comes after the headers.
    // Before, a whole answer's hold got its id only from the body: a kill before it left a line no reconcile could settle.
    const id = await killedAnswering(state, env, '/chat/completions', 0, ['chat', '--no-stream', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words']);
    expect(id).toMatch(/^gen-/);
    const { bound, settled } = await settledAfterKill(state, env, id);
    expect(bound.cost).toBe(0.000354);
    // local/lorem's 200 tokens: what the service charged, the bound's difference put beside it.
    expect(settled).toMatchObject({ real_cost: 0.0003025 });
  });

  it('`router responses` killed -9 mid-answer: response.created gave its hold the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-responses');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    // Before, the hold never got the id: the kill left a line with `"endpoint": "unknown"` that no reconcile could settle.
    const id = await killedAnswering(state, env, '/responses', 1, ['responses', '--model', 'local/lorem', '--max-output-tokens', '200', 'write 500 words']);
    const { bound, settled } = await settledAfterKill(state, env, id, '/v1/responses');
    expect(bound.cost).toBeGreaterThan(0);
    // A stream cut by its reader's death is charged what was made of it by then: up to the 200 tokens' $0.0003025
    // (under load the kill can come after 20 of them, $0.0000325), never nothing.
    expect(settled.real_cost).toBeGreaterThan(0);
    expect(settled.real_cost).toBeLessThanOrEqual(0.0003025);
    expect(settled.cost).toBeCloseTo(settled.real_cost! - bound.cost, 10);
  });

  it('a whole `router responses` (--json) killed -9 after its head: the head gave the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-responses-whole');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    const id = await killedAnswering(state, env, '/responses', 0, ['responses', '--json', '--model', 'local/lorem', '--max-output-tokens', '200', 'write 500 words']);
    expect(id).toMatch(/^resp_/);
    const { settled } = await settledAfterKill(state, env, id, '/v1/responses');
    expect(settled).toMatchObject({ real_cost: 0.0003025 });
  });

  it('`router embed` killed -9 after its answer\'s head: the head gave the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-embed');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    const id = await killedAnswering(state, env, '/embeddings', 0, ['embed', '--model', 'local/embed', 'a sentence to embed']);
    const { settled } = await settledAfterKill(state, env, id, '/v1/embeddings');
    expect(settled.real_cost).toBeGreaterThan(0);
  });

  it('`router decide` killed -9 after its answer\'s head: the head gave the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-decide');
    // Decisions take a management key.
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: t.managementKey };
    const id = await killedAnswering(state, env, '/decisions', 0, ['decide', '--model', 'local/judge', '--state-text', 'the food was cold', '--noul', 'spam', 'Is this spam?']);
    const { settled } = await settledAfterKill(state, env, id, '/alpha/decisions');
    expect(settled.real_cost).toBeGreaterThan(0);
  });

  it.skipIf(!HAS_TMUX)('a `chat -i` turn killed -9 mid-answer: its hold had the id, and `usage --reconcile` settles it', async () => {
    const state = join(t.dir, 'killed-repl');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' };
    // The turn's head and first KiB (its first chunks, with the id) are sent; the rest is held: the turn is mid-answer until killed.
    await t.admin('faults', { faults: ['held,after=1,path=/chat/completions,times=1'] });
    const term = new Terminal({ ...t.env, ...env });
    const held = () => holds(state).map((n) => JSON.parse(readFileSync(join(state, 'budget-holds', n), 'utf8')) as { id?: string; command?: string; pid: number });
    try {
      term.run(`node ${BIN} chat -i --model local/lorem`);
      await term.waitFor(/^>\s*$/m);
      term.run('write 500 words');
      expect(await until(() => held().some((h) => h.id !== undefined))).toBe(true);
      process.kill(held()[0]!.pid, 'SIGKILL');
      await until(() => !processAlive(held()[0]!.pid));
    } finally {
      await term.close();
      await t.admin('faults', { faults: [] });
    }
    const [hold] = held();
    expect(hold).toMatchObject({ id: expect.stringMatching(/^gen-/), command: 'chat' });
    const { bound, settled } = await settledAfterKill(state, env, hold!.id!);
    expect(settled.real_cost).toBeGreaterThan(0);
    expect(settled.cost).toBeCloseTo(settled.real_cost! - bound.cost, 10);
  });

  // Each round of a tool loop is charged; the second is carried out by the service, its answer (and so its generation id) held back,
  // and the CLI killed -9 then. Its line is `held-…`, settled by the key's spend once an hour old (reconcile-held.ts): `usage
  // --reconcile` right after settles the named round and says the other waits; run an hour later (its clock moved, not slept), the
  // ledger is what the service charged the key. Streamed too, where round two is named by its first chunk and settled at once.
  it.each([['--no-stream, no head', ['--no-stream'], 'held'], ['streamed, no head', [], 'held'], ['streamed, first chunk', [], 'held,after=1']] as const)('kill -9 in a tool loop\'s second round (%s): ledger and `usage --reconcile` account every charge', async (name, flags, fault) => {
    const state = join(t.dir, `tool-loop-${name.replace(/\W+/g, '-')}`);
    mkdirSync(state, { recursive: true });
    // A key of its own: a held line is settled by its key's spend in its time, and that of other cases run within the
    // minute either side allowed for clocks would be counted in (never below the charge, docs/config.md).
    const made = await fetch(`${t.apiRoot}/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${t.managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `tool-loop ${name}` }) });
    expect(made.status).toBe(201);
    const apiKey = ((await made.json()) as { key: string }).key;
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5', ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: t.managementKey };
    // The tool holds back the answer to the round after it, then answers.
    const hold = JSON.stringify({ faults: [`${fault},path=/chat/completions,times=1`] });
    const script = `fetch(${JSON.stringify(`${t.apiRoot}/_emulator/faults`)}, { method: 'POST', headers: { authorization: 'Bearer ${t.operatorKey}', 'content-type': 'application/json' }, body: ${JSON.stringify(hold)} }).then(() => console.log('sunny'))`;
    const tools = join(state, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: `${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}` }]));
    const usage = async () => ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { data: { usage: number } }).data.usage;
    const before = await usage();
    const asked = chats();
    const child = t.spawn(['chat', '--model', 'local/tools', '--tools', tools, ...flags, 'weather in Paris?'], env);
    const closed = new Promise((r) => child.on('close', r));
    const ledger = () => (existsSync(join(state, 'usage.jsonl')) ? readFileSync(join(state, 'usage.jsonl'), 'utf8').split('\n').filter((l) => l.endsWith('}')).map((l) => JSON.parse(l) as LedgerLine & { reconciles?: string }) : []);
    const heldId = () => holds(state).map((n) => (JSON.parse(readFileSync(join(state, 'budget-holds', n), 'utf8') || '{}') as { id?: string }).id).find(Boolean);
    const named = fault !== 'held';
    try {
      // Round one's line in the ledger and round two at the service (named: its hold names its answer), then the kill.
      expect(await until(() => ledger().length === 1 && chats() === asked + 2 && (!named || heldId() !== undefined))).toBe(true);
      if (!named) expect(heldId()).toBeUndefined();
    } finally {
      child.kill('SIGKILL');
      await closed;
      await t.admin('faults', { faults: [] });
    }
    const charged = (await usage()) - before;
    const first = ledger()[0]!.cost;
    // Round two was charged too (a held answer is carried out first).
    expect(charged).toBeGreaterThan(first);
    const now = await t.run(['usage', '--reconcile', '--json'], { env });
    expect(now.code, now.stderr).toBe(0);
    const held = ledger().find((l) => l.unsettled);
    expect(held?.id).toMatch(named ? /^gen-/ : /^held-[0-9a-f]{16}$/);
    // Its time is its own round's, sent after round one was logged (before, the loop's start: round one's time, and any other
    // program's calls on the key then, were in the range it is settled by).
    if (!named) expect(Date.parse(held!.sent_after!)).toBeGreaterThanOrEqual(Date.parse(ledger()[0]!.time!));
    expect((JSON.parse(now.stdout) as { held: { waiting: string[] } }).held.waiting).toEqual(named ? [] : [held!.id]);
    if (!named) {
      const later = await t.run(['usage', '--reconcile', '--json'], { env: { ...env, NODE_OPTIONS: `--require ${join(import.meta.dirname, '../support/clock-ahead.cjs')}`, ROUTER_TEST_CLOCK_AHEAD_MS: String(61 * 60_000) } });
      expect(later.code, later.stderr).toBe(0);
      expect((JSON.parse(later.stdout) as { held: { settled: { id: string }[] } }).held.settled).toEqual([expect.objectContaining({ id: held!.id })]);
    }
    expect(ledger().filter((l) => l.reconciles === held!.id)).toHaveLength(1);
    expect(ledger().reduce((sum, l) => sum + l.cost, 0)).toBeCloseTo(charged, 10);
    expect(holds(state)).toEqual([]);
  });

  it('a ledger that takes no more (a file-size limit): each cost is held for a day instead, said piped too, and the budget still stops the calls', async () => {
    const state = join(t.dir, 'unrecorded');
    mkdirSync(state, { recursive: true });
    // A ledger past the size the process may write (ulimit -f 2: 2 KiB): every append fails (EFBIG), the small hold files do not.
    const old = JSON.stringify({ time: '2020-01-01T00:00:00.000Z', profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', cost: 0 });
    writeFileSync(join(state, 'usage.jsonl'), `${old}\n`.repeat(40));
    const env = { ...process.env, ...t.env, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.001' };
    t.clearRequests();
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const child = spawn('sh', ['-c', 'ulimit -f 2 && exec "$@"', 'sh', process.execPath, BIN, ...CALL], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b));
      const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
      codes.push(code);
      if (code === 0) expect(stderr).toContain(`warning: the usage ledger ${join(state, 'usage.jsonl')} could not be written (too large): its cost is held against the budgets for a day instead\n`);
      else expect(stderr).toMatch(/^error: this call could cost up to \$0\.000354, over what is left of daily_budget \(\$0\.0000925, ROUTER_DAILY_BUDGET, after the \$0\.0009075 held by batches not yet seen ended or calls the ledger could not take\)/);
    }
    // Three calls of $0.0003025 fit $0.001; before, all five were sent ($0.0015), unseen.
    expect(codes).toEqual([0, 0, 0, 4, 4]);
    expect(chats()).toBe(3);
    expect(holds(state).every((n) => n.startsWith('unrecorded-'))).toBe(true);
  });
});

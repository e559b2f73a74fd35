import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// Batches count from the moment they are made: a created batch holds its bound against the budget
// until its real cost is known, and concurrent creates take holds as concurrent chats do. Before:
// five `batch create`s without --watch, each within the budget alone, together 2.8x over, all passed.
const t = startedForAll(() => startCliEnv());

const creates = () => t.requests().filter((r) => r.path === '/v1/batches' && r.method === 'POST').length;
let n = 0;
function requestsFile(): string {
  const path = join(t.dir, `requests-${++n}.jsonl`);
  writeFileSync(path, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: 'write 500 words' }], max_tokens: 200 } })).join('\n') + '\n');
  return path;
}

async function boundOf(file: string): Promise<number> {
  const r = await t.run(['batch', 'create', file, '--model', 'local/lorem', '--dry-run']);
  const m = /at most \$([\d.]+)/.exec(r.stdout + r.stderr);
  expect(m, r.stdout + r.stderr).not.toBeNull();
  return Number(m![1]);
}

describe('batch create under a budget', () => {
  it('five at once without --watch under a budget that two fit: two are created, three refused (exit 4); the two hold their bounds', async () => {
    const file = requestsFile();
    const bound = await boundOf(file);
    const state = join(t.dir, 'state-batches');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: String(bound * 2.5) };
    t.clearRequests();
    const runs = await Promise.all([1, 2, 3, 4, 5].map(() => t.run(['batch', 'create', file, '--model', 'local/lorem'], { env })));
    expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('')).toEqual([0, 0, 4, 4, 4]);
    expect(creates()).toBe(2);
    for (const r of runs.filter((r) => r.code === 4)) expect(r.stderr).toMatch(/^error: .*(daily_budget).*/);
    // The processes are gone; the batches still hold, each in a file of its own.
    expect(readdirSync(join(state, 'budget-holds')).filter((f) => f.startsWith('batch-'))).toHaveLength(2);
    // One more, later: still refused while they hold.
    expect((await t.run(['batch', 'create', file, '--model', 'local/lorem'], { env })).code).toBe(4);
  });

  it('batch run without --watch: each shard submitted holds its own bound past the run, so three runs under a budget that fits two submit two', async () => {
    // Files that differ (one the same as another's is that job resumed), each of the same bound.
    const files = [1, 2, 3].map((k) => {
      const path = join(t.dir, `run-${k}.jsonl`);
      writeFileSync(path, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `write 500 words, ${k}` }], max_tokens: 200 } })).join('\n') + '\n');
      return path;
    });
    const bound = await boundOf(files[0]!);
    const state = join(t.dir, 'state-runs');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: String(bound * 2.5) };
    t.clearRequests();
    const runs = [];
    // Two shards of two requests each: each batch holds the bound of its own lines.
    for (const file of files) runs.push(await t.run(['batch', 'run', file, '--model', 'local/lorem', '--max-requests', '2'], { env }));
    expect(runs.map((r) => r.code), runs.map((r) => r.stderr).join('')).toEqual([0, 0, 4]);
    expect(runs[2]!.stderr).toMatch(/^error: .*daily_budget.*nothing was submitted/);
    expect(creates()).toBe(4);
    const holds = readdirSync(join(state, 'budget-holds')).filter((f) => f.startsWith('batch-'));
    expect(holds).toHaveLength(4);
    const held = holds.reduce((sum, f) => sum + (JSON.parse(readFileSync(join(state, 'budget-holds', f), 'utf8')) as { usd: number }).usd, 0);
    expect(held).toBeCloseTo(bound * 2, 9);
    expect(readdirSync(join(state, 'budget-holds')).filter((f) => !f.startsWith('batch-') && f.endsWith('.json'))).toEqual([]);
  });

  it('once a batch\'s cost is in the ledger (batch get of it ended), its hold is gone', async () => {
    const file = requestsFile();
    const bound = await boundOf(file);
    const state = join(t.dir, 'state-watch');
    const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: String(bound * 10) };
    const r = await t.run(['batch', 'create', file, '--model', 'local/lorem', '--watch'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(state, 'budget-holds')).filter((f) => f.startsWith('batch-') || f.endsWith('.json'))).toEqual([]);
  });
});

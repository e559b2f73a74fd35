import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A price read from the 5-minute model cache can be stale: a budget decision near the line reads
// fresh prices. Here the kept list says local/lorem costs half what it does.
const t = startedForAll(() => startCliEnv());

// local/lorem at --max-tokens 200: bound $0.000354, cost $0.000302 at its real prices; $0.000177 at half.
const CALL = ['chat', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words'];
const chats = () => t.requests().filter((r) => r.path === '/v1/chat/completions').length;

/** Keeps a model list in `state` whose prices for local/lorem are `factor` times the real ones. */
async function staleCache(state: string, factor: number): Promise<void> {
  expect((await t.run(['models', 'lorem'], { env: { ROUTER_STATE_DIR: state } })).code).toBe(0);
  const dir = join(state, 'models');
  const [file] = readdirSync(dir).filter((n) => n.endsWith('.json'));
  const cached = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as { models: { id: string; pricing: Record<string, string> }[] };
  for (const m of cached.models.filter((m) => m.id === 'local/lorem')) for (const k of ['prompt', 'completion']) m.pricing[k] = String(Number(m.pricing[k]) * factor);
  writeFileSync(join(dir, file!), JSON.stringify(cached));
}

describe('a budget decision near the line', () => {
  it('is made on fresh prices: a call that fits only at the stale ones is refused (exit 4), nothing spent', async () => {
    const state = join(t.dir, 'state-stale');
    await staleCache(state, 0.5);
    t.clearRequests();
    const r = await t.run(CALL, { env: { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0003' } });
    expect(r.stderr).toMatch(/^error: this call could cost up to \$0\.000354, over what is left of daily_budget/);
    expect(r.code).toBe(4);
    expect(chats()).toBe(0);
  });

  it('far from the line the kept list is used (no fetch of the model list)', async () => {
    const state = join(t.dir, 'state-far');
    await staleCache(state, 1);
    t.clearRequests();
    const r = await t.run(CALL, { env: { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5' } });
    expect(r.code).toBe(0);
    expect(t.requests().filter((q) => q.path === '/v1/models')).toHaveLength(0);
  });
});

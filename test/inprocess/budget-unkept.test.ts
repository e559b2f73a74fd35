import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { fullDiskPerFile, mounted } from '../support/full-disk.js';
import { startedForAll } from '../support/for-all.js';

// While a budget is in force, a call that cannot be held and recorded is refused (exit 4, one line):
// before, with the state folder read-only or full, six calls spent 3.7x what was left, all exit 0, and
// when the hold file could not be made, 12 calls at once spent twice the budget.
const t = startedForAll(() => startCliEnv());
const { disk, fill } = fullDiskPerFile();

const CALL = ['chat', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words'];
const chats = () => t.requests().filter((r) => r.path === '/v1/chat/completions').length;
const REFUSED = /^error: the budgets cannot be kept: .+ cannot be written \(.+\), so this call could be neither held nor recorded; nothing was sent \(--ignore-budget sends it anyway\)\n$/;

async function refusedAll(state: string, n: number): Promise<void> {
  t.clearRequests();
  const env = { ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '0.0008' };
  const runs = await Promise.all(Array.from({ length: n }, () => t.run(CALL, { env })));
  for (const r of runs) {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(REFUSED);
  }
  expect(chats()).toBe(0);
}

describe('a budget that cannot be kept', () => {
  it('a state folder that cannot be made (a file where it goes): 12 calls at once all refused, none sent', async () => {
    const file = join(t.dir, 'not-a-folder');
    writeFileSync(file, 'x');
    await refusedAll(join(file, 'state'), 12);
  });

  it('without a budget, the same folder does not stop the call (the ledger line is said lost)', async () => {
    const file = join(t.dir, 'not-a-folder-2');
    writeFileSync(file, 'x');
    const r = await t.run(CALL, { env: { ROUTER_STATE_DIR: join(file, 'state') } });
    expect(r.code).toBe(0);
  });

  it('--ignore-budget sends it anyway', async () => {
    const file = join(t.dir, 'not-a-folder-3');
    writeFileSync(file, 'x');
    const r = await t.run([...CALL, '--ignore-budget'], { env: { ROUTER_STATE_DIR: join(file, 'state'), ROUTER_DAILY_BUDGET: '0.0008' } });
    expect(r.code, r.stderr).not.toBe(4);
  });

  it.skipIf(!mounted)('a read-only state folder: six calls refused', async () => {
    const ro = join(t.dir, 'read-only');
    mkdirSync(ro, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', ro]).status).toBe(0);
    try {
      await refusedAll(ro, 6);
    } finally {
      spawnSync('umount', [ro]);
      rmSync(ro, { recursive: true, force: true });
    }
  });

  it.skipIf(!mounted)('a full state folder: 12 calls at once refused', async () => {
    const state = join(disk, 'state');
    mkdirSync(state, { recursive: true });
    fill();
    await refusedAll(state, 12);
    // Before, each refused call left its hold file behind, empty (made, then its write failed).
    const holds = join(state, 'budget-holds');
    expect(existsSync(holds) ? readdirSync(holds).filter((n) => !n.startsWith('.lock')) : []).toEqual([]);
  });
});

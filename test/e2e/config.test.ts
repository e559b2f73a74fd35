import { existsSync, rmSync, symlinkSync, watch } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { SETTLE } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());

describe('changes from processes at once', () => {
  const configIn = (name: string) => ({ ROUTER_CONFIG_DIR: join(t.dir, name) });
  const models = async (env: Record<string, string>) =>
    Object.fromEntries((JSON.parse((await t.run(['config', 'list', '--json'], { env })).stdout).profiles as { name: string; model?: string }[]).map((p) => [p.name, p.model]));

  it('a lock left by a killed process is taken over; one held by a live process is waited for', async () => {
    const env = configIn('locked');
    expect((await t.run(['config', 'set', 'model', 'local/a', '--profile', 'x'], { env })).code).toBe(0);
    const lock = join(t.dir, 'locked', 'config.json.lock');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    symlinkSync(String(dead), lock);
    expect((await t.run(['config', 'set', 'model', 'local/b', '--profile', 'x'], { env })).code).toBe(0);
    expect((await models(env)).x).toBe('local/b');
    expect(existsSync(lock)).toBe(false);

    symlinkSync(String(process.pid), lock);
    // Each try at the lock makes and removes its mark for older routers, `config.json.lock.0`: a second one made is
    // a try after one that found the lock held, i.e. the set is waiting, not yet started (a sleep could end first).
    let marks = 0;
    const watcher = watch(join(t.dir, 'locked'), (_, name) => {
      if (name === 'config.json.lock.0') marks++;
    });
    let ended = false;
    const pending = t.run(['config', 'set', 'model', 'local/c', '--profile', 'x'], { env }).finally(() => (ended = true));
    try {
      await vi.waitFor(() => expect(marks).toBeGreaterThanOrEqual(3), SETTLE);
    } finally {
      watcher.close();
    }
    expect(ended).toBe(false);
    expect((await models(env)).x).toBe('local/b');
    rmSync(lock);
    expect((await pending).code).toBe(0);
    expect((await models(env)).x).toBe('local/c');
  });
});

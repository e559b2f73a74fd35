import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { lockHooks } from '../../src/internal/lock-text.js';
import { ConversationStore } from '../../src/kit/conversation-store.js';
import { listJobs, jobsDir } from '../../src/batch/job/store.js';
import { heldByOthers, holdsDir } from '../../src/kit/spend/budget-hold.js';
import { StateStore } from '../../src/emulator/state/store.js';
import { ProfileStore } from '../../src/config/profiles.js';

// What a process killed between the rename and the unlink of a release (removeIf) leaves: its lock, its mark
// (`<lock>.0`) or a guard moved to `…~PID`, a link of a few bytes. Through the lock code's seams (lockHooks: the
// clock it reads a link's age by, a volume read as shared), not vi.mock: test files share their workers' modules.
const dir = mkdtempSync(join(tmpdir(), 'router-lock-moves-'));
const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
const later = (ms: number) => () => Date.now() + ms;
afterEach(() => {
  lockHooks.now = undefined;
  lockHooks.shared = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `names` made in a fresh folder as a killed release leaves them (links to a pid or a lock's text). */
function folder(name: string, names: string[]): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const n of names) symlinkSync(n.includes('.lock.0~') ? String(dead) : `${dead}:1@host`, join(d, n));
  return d;
}
const left = (d: string) => readdirSync(d).filter((n) => n.includes('~')).sort();

describe('what a killed release left is cleared where its folder is read anyway', () => {
  it('conversations: a mark, a lock and a guard of a process gone, moved over a minute ago', () => {
    const d = folder('conversations', ['c1.json.lock.0~' + dead, 'c1.json.lock~' + dead, `c1.json.lock.${dead}~${dead}`]);
    symlinkSync(String(process.ppid), join(d, `c2.json.lock.0~${process.ppid}`)); // a live process's: under way
    symlinkSync(String(process.pid), join(d, `c3.json.lock.0~${process.pid}`)); // this one's
    writeFileSync(join(d, `notes.lock~${dead}`), 'a file, not a lock link');
    symlinkSync('x', join(d, `draft~${dead}`)); // not a lock's name
    const store = new ConversationStore({ dir: d });
    // Just moved: a process of another pid namespace holds one for microseconds, its pid not ours to check.
    store.ids();
    expect(left(d)).toHaveLength(7);
    // Before: left there for good.
    lockHooks.now = later(2 * 60_000);
    expect(store.ids()).toEqual([]);
    expect(left(d)).toEqual([`c2.json.lock.0~${process.ppid}`, `c3.json.lock.0~${process.pid}`, `draft~${dead}`, `notes.lock~${dead}`]);
  });

  it('on a volume other machines may share, only one moved before this boot began', () => {
    const d = folder('shared', [`c1.json.lock.0~${dead}`]);
    lockHooks.shared = () => true;
    lockHooks.now = later(2 * 60_000);
    new ConversationStore({ dir: d }).ids();
    expect(left(d)).toEqual([`c1.json.lock.0~${dead}`]);
    lockHooks.now = later(uptime() * 1000 + 60_000);
    new ConversationStore({ dir: d }).ids();
    expect(left(d)).toEqual([]);
  });

  it('batch jobs, the budgets\' holds and router serve\'s state folder', () => {
    const env = { ROUTER_STATE_DIR: join(dir, 'state') };
    const jobs = folder('state/jobs', [`jobs.lock.0~${dead}`]);
    const holds = folder('state/budget-holds', [`.lock.0~${dead}`, `.lock~${dead}`]);
    const serve = folder('serve', [`serve.lock.0~${dead}`]);
    expect([jobs, holds]).toEqual([jobsDir(env), holdsDir(env)]);
    lockHooks.now = later(2 * 60_000);
    expect(listJobs(env)).toEqual([]);
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0 });
    new StateStore(serve);
    // Before: each left there for good.
    expect([left(jobs), left(holds), left(serve)]).toEqual([[], [], []]);
  });

  it('the config folder, when a profile is changed', () => {
    const d = folder('config', [`config.json.lock.0~${dead}`, `config.json.lock~${dead}`]);
    const store = new ProfileStore(d, {});
    lockHooks.now = later(2 * 60_000);
    expect(left(d)).toHaveLength(2);
    store.use('work');
    // Before: left there for good (nothing read the folder).
    expect(left(d)).toEqual([]);
  });
});

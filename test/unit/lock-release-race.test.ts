import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeLock } from '../../src/internal/file-lock.js';
import { lockHooks, lockHost, lockText } from '../../src/internal/lock-text.js';
import { processStart } from '../../src/internal/process.js';
import { linkThere } from '../support/link-there.js';

// Another process acting in the moment right before this one removes its lock or its mark, through the lock
// code's seam (lockHooks.beforeRemove), not vi.mock: test files share their workers' modules (isolate: false).
const dir = mkdtempSync(join(tmpdir(), 'router-lock-release-'));
afterAll(() => {
  lockHooks.beforeRemove = undefined;
  rmSync(dir, { recursive: true, force: true });
});
const taken = (lock: string) => {
  const t = takeLock(lock);
  if (!('release' in t)) throw new Error(`not taken: ${JSON.stringify(t)}`);
  return t.release;
};
/** The text of a lock of another process of this machine (alive, started when it says). */
const otherText = `${process.ppid}:${processStart(process.ppid)}@${lockHost()}${lockText().match(/[+#].*$/)?.[0] ?? ''}`;

describe('a release removes a lock and its mark only while they are its own', () => {
  const replace = (path: string, text: string) => {
    symlinkSync(text, `${path}.next`);
    renameSync(`${path}.next`, path);
  };
  const once = (path: string, step: () => void) => {
    lockHooks.beforeRemove = (p) => {
      if (p !== path) return;
      lockHooks.beforeRemove = undefined;
      step();
    };
  };

  it('a mark another holder made in the moment between its read and its removal is left', () => {
    const lock = join(dir, 'mark.lock');
    const release = taken(lock);
    // Another process takes the lock over in that moment and marks it (markForOlder renames its mark into place).
    once(`${lock}.0`, () => replace(`${lock}.0`, String(process.ppid)));
    release();
    expect(lockHooks.beforeRemove).toBeUndefined();
    expect(linkThere(lock)).toBe(false);
    // Before: the guard was read as this process's, then removed: the other holder's.
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.ppid));
    expect(readdirSync(dir).filter((n) => n.includes('~'))).toEqual([]);
  });

  it('a lock another took over in that moment is left to it, with its mark', () => {
    const lock = join(dir, 'taken-over.lock');
    const release = taken(lock);
    once(lock, () => {
      replace(lock, otherText);
      replace(`${lock}.0`, String(process.ppid));
    });
    release();
    expect(readlinkSync(lock)).toBe(otherText);
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.ppid));
    expect(readdirSync(dir).filter((n) => n.includes('~'))).toEqual([]);
  });
});

describe('a process killed between moving its lock (or mark) away and unlinking it', () => {
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  it('leaves nothing for good: the next taker, clearing its mark, removes what it moved', () => {
    const lock = join(dir, 'killed.lock');
    // As `kill -9` at the unlink of its release leaves it (measured with strace's inject=unlink:signal=SIGKILL):
    // the lock moved to its name, the mark still there; or, killed in the mark's removal, the mark moved too.
    symlinkSync(`${dead}:1@${lockHost()}`, `${lock}~${dead}`);
    symlinkSync(String(dead), `${lock}.0`);
    symlinkSync(String(dead), `${lock}.0~${dead}`);
    taken(lock)();
    // Before: killed.lock~<pid>.1 stayed in the folder for good, one more for each such kill.
    expect(readdirSync(dir).filter((n) => n.startsWith('killed.'))).toEqual([]);
  });
});

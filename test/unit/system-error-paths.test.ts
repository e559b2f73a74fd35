import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeSystemError, type SystemError } from '../../src/internal/system-errors.js';

// A failure of a call of two paths names the file made or written (a read-only HOME: "cannot use
// aliases.json.lock", not the lock's mark "pid:start@host", which is a symlink's target).
const dir = mkdtempSync(join(tmpdir(), 'router-syserr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const failure = (call: () => void): SystemError => {
  try {
    call();
  } catch (err) {
    return err as SystemError;
  }
  throw new Error('the call did not fail');
};

describe('describeSystemError', () => {
  it('names the link a symlink could not make, not its target', () => {
    const lock = join(dir, 'aliases.json.lock');
    writeFileSync(lock, '');
    const said = describeSystemError(failure(() => symlinkSync('8566:5965313@vm+6591603f', lock)));
    expect(said.startsWith(`cannot use ${lock}: `)).toBe(true);
    expect(said).not.toContain('8566:5965313');
  });

  it('names the file a rename could not write, not its temp file', () => {
    const temp = join(dir, '.config.json.tmp');
    writeFileSync(temp, '{}');
    const file = join(dir, 'gone', 'config.json');
    const said = describeSystemError(failure(() => renameSync(temp, file)));
    expect(said.startsWith(`cannot write ${file}: `)).toBe(true);
  });
});

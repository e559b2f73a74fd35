import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The repository's commit-msg hook (set up by `npm install` in a git checkout): subjects of at most 72 characters.
const HOOK = resolve(import.meta.dirname, '..', '..', '.githooks', 'commit-msg');
const dir = mkdtempSync(join(tmpdir(), 'router-hook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function hook(message: string) {
  const file = join(dir, 'MSG');
  writeFileSync(file, message);
  return spawnSync('sh', [HOOK, file], { encoding: 'utf8' });
}

describe('.githooks/commit-msg', () => {
  it('takes a subject of 72 characters with a long body; refuses one of 73, saying why', () => {
    expect(hook(`${'a'.repeat(72)}\n\n${'b'.repeat(300)}\n`).status).toBe(0);
    const long = hook(`# a comment git strips\n${'a'.repeat(73)}\n`);
    expect(long.status).toBe(1);
    expect(long.stderr).toMatch(/^commit-msg: the subject is 73 characters; keep it to 72/);
  });
});

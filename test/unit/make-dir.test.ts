import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { makeDir } from '../../src/internal/make-dir.js';

const folder = tempFolder('router-make-dir-');

describe('makeDir', () => {
  it('makes every missing folder, private, and accepts one that exists', () => {
    const deep = join(folder(), 'a', 'b', 'c');
    makeDir(deep);
    for (const p of [join(folder(), 'a'), join(folder(), 'a', 'b'), deep]) expect(statSync(p).mode & 0o777).toBe(0o700);
    expect(() => makeDir(deep)).not.toThrow();
  });

  it('a file in the way is ENOTDIR, a file at the end EEXIST', () => {
    const file = join(folder(), 'file');
    writeFileSync(file, 'x');
    expect(() => makeDir(join(file, 'sub'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => makeDir(file)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });

  // node's mkdirSync(..., { recursive: true }) never returns here: ENOENT, then EEXIST for /proc, forever.
  it.skipIf(!existsSync('/proc/self'))('a folder that cannot be made under /proc fails at once', () => {
    expect(() => makeDir('/proc/router-nope/x')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

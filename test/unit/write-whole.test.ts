import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { writeWhole } from '../../src/internal/write-whole.js';
import { describeSystemError } from '../../src/internal/system-errors.js';

const folder = tempFolder('router-atomic-');

describe('writeWhole', () => {
  it('replaces a file whole, leaving no temp file', () => {
    writeWhole(join(folder(), 'a.json'), 'old');
    writeWhole(join(folder(), 'a.json'), 'new', true);
    expect(readFileSync(join(folder(), 'a.json'), 'utf8')).toBe('new');
    expect(readdirSync(folder())).toEqual(['a.json']);
  });

  it('a write that fails is named by the file meant, not the temp one, and its temp file is removed', () => {
    const sub = join(folder(), 'sub');
    mkdirSync(join(sub, 'job.json'), { recursive: true });
    writeFileSync(join(sub, 'job.json', 'inside'), 'x'); // a folder in the way: the rename fails
    let failure: unknown;
    try {
      writeWhole(join(sub, 'job.json'), '{}', true);
    } catch (err) {
      failure = err;
    }
    expect(describeSystemError(failure as never)).toMatch(new RegExp(`^cannot write ${join(sub, 'job.json')}: `));
    expect(readdirSync(sub)).toEqual(['job.json']);
  });
});

describe('system errors in words', () => {
  it("says a code in our words, else the system's own, else the code", () => {
    expect(describeSystemError({ code: 'ENOSPC', syscall: 'write', path: '/x', message: '' })).toBe('cannot write /x: disk full');
    expect(describeSystemError({ code: 'ENODEV', syscall: 'read', path: '/x', message: '' })).toBe('cannot read /x: no such device');
    expect(describeSystemError({ code: 'EWHATEVER', syscall: 'read', path: '/x', message: '' })).toBe('cannot read /x: EWHATEVER');
  });
});

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWhole } from '../../src/internal/write-whole.js';
import { describeSystemError } from '../../src/internal/system-errors.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-atomic-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeWhole', () => {
  it('replaces a file whole, leaving no temp file', () => {
    writeWhole(join(dir, 'a.json'), 'old');
    writeWhole(join(dir, 'a.json'), 'new', true);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('a write that fails is named by the file meant, not the temp one, and its temp file is removed', () => {
    const sub = join(dir, 'sub');
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

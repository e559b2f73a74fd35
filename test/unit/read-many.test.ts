import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { readTextReusing } from '../../src/internal/read-many.js';

const folder = tempFolder('router-read-many-');

describe('readTextReusing', () => {
  it('reads files bigger than its buffer whole, UTF-8 across the buffer edge, and small ones after them', () => {
    const big = `${'a'.repeat(65_535)}é${'日本'.repeat(50_000)}`;
    writeFileSync(join(folder(), 'big.txt'), big);
    writeFileSync(join(folder(), 'small.txt'), 'ünï');
    writeFileSync(join(folder(), 'empty.txt'), '');
    expect(readTextReusing(join(folder(), 'big.txt'))).toBe(big);
    expect(readTextReusing(join(folder(), 'small.txt'))).toBe('ünï');
    expect(readTextReusing(join(folder(), 'empty.txt'))).toBe('');
    expect(() => readTextReusing(join(folder(), 'missing.txt'))).toThrow(/ENOENT/);
  });
});

import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const tableCodes = () =>
  readFileSync(join(ROOT, 'docs', 'reliability.md'), 'utf8')
    .split('\n')
    .flatMap((line) => /^\| (\d+) \|/.exec(line)?.[1] ?? [])
    .map(Number);

describe('the exit code table of docs/reliability.md', () => {
  it('lists every code of EXIT, and no other', () => {
    expect(tableCodes().sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });

  // set -e scripts test `$? -eq 143` after `timeout 60 router chat …`: the code a signal ends a command with is documented.
  it('lists the code of each signal a command ends on (128 + its number)', () => {
    const signals = (['SIGHUP', 'SIGINT', 'SIGTERM'] as const).map((s) => 128 + constants.signals[s]);
    expect(signals.filter((code) => !tableCodes().includes(code))).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { examplesPerFile, INTERACTIVE } from '../support/examples.js';

// Every example of the README runs verbatim against the emulator (--help's: examples.test.ts).
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const runExamples = examplesPerFile();

/** Commands of the README's sh blocks, with what cannot run as written set aside. */
function readmeExamples(): string[] {
  const md = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ''));
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
    // The two install-and-run commands (they are the README's own subject) and placeholders for keys.
    .filter((l) => !/^npm (install|run|link)/.test(l) && !l.includes('…'));
}

it('every example of the README runs verbatim', async () => {
  const examples = readmeExamples().filter((e) => !INTERACTIVE.test(e));
  expect(examples.length).toBeGreaterThan(25);
  expect(await runExamples(examples)).toEqual([]);
}, 120_000);

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Lines that continue a list item (indented) right after a blank line: the item's start was lost. */
function orphanContinuations(text: string): string[] {
  const found: string[] = [];
  let fenced = false;
  let previous = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && previous.trim() === '' && /^ {1,3}[a-z]/.test(line)) found.push(line);
    previous = line;
  }
  return found;
}

it('no paragraph of the README or docs/ starts in the middle of a sentence (a list item cut at its start)', () => {
  const cut = pages.flatMap((p) => orphanContinuations(readFileSync(join(ROOT, p), 'utf8')).map((l) => `${p}: ${l}`));
  expect(cut).toEqual([]);
});

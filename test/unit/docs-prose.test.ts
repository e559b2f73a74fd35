import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { textWidth } from '../../src/cli/markdown/runs.js';

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

/** The lines of a page's shell examples (sh, fish) wider than a terminal's 80 columns. */
function wideExamples(text: string): string[] {
  const blocks = [...text.matchAll(/```(sh|fish)\n([\s\S]*?)```/g)].map((m) => m[2]!);
  return blocks.flatMap((b) => b.split('\n')).filter((l) => textWidth(l) > 80);
}

// --help's examples fit 80 columns (command-shape.test.ts); so do the shell examples of the README and every page of
// docs/, a long line continued by ` \` lines that run as they read (readme-examples.test.ts joins them). Was: 91 lines
// of 11 pages over 80 (scripting.md alone was checked).
it('the shell examples of the README and every page of docs/ fit 80 columns', () => {
  expect(pages.length).toBeGreaterThan(15);
  expect(pages.flatMap((p) => wideExamples(readFileSync(join(ROOT, p), 'utf8')).map((l) => `${p}: ${l}`))).toEqual([]);
});

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

// Pages move (docs/gateway.md's internals to docs/gateway-internals.md, scripting.md's keys to keys.md): every link
// and every `docs/NAME.md` named anywhere in the tree must still reach a page, and a link's #part one of its headings.
const ROOT = resolve(import.meta.dirname, '..', '..');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

/** The anchors of a page's headings (outside code blocks). */
function anchors(page: string): Set<string> {
  let fenced = false;
  const found = new Set<string>();
  for (const line of readFileSync(join(ROOT, page), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) found.add(slug(line.replace(/^#+ /, '')));
  }
  return found;
}

/** A page's text with its code blocks and code spans left out (a link there is an example, not a link). */
const prose = (text: string) => text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');

it('every relative link of the README and docs/ reaches a file, and its #part a heading of that page', () => {
  const broken: string[] = [];
  let links = 0;
  for (const page of pages) {
    for (const [, target] of prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      links++;
      const [file, part] = target!.split('#') as [string, string | undefined];
      const to = file ? relative(ROOT, resolve(dirname(join(ROOT, page)), file)) : page;
      if (!existsSync(join(ROOT, to))) broken.push(`${page}: ${target} (no ${to})`);
      else if (part !== undefined && to.endsWith('.md') && !anchors(to).has(part)) broken.push(`${page}: ${target} (no heading #${part} in ${to})`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(100);
});

it('every docs/*.md page the README, docs/, src/, test/, bench/ and scripts/ name is a page', () => {
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((n) => {
      const p = join(dir, n);
      return statSync(join(ROOT, p)).isDirectory() ? files(p) : /\.(md|ts|mjs|cjs)$/.test(n) ? [p] : [];
    });
  const missing = new Set<string>();
  for (const file of ['README.md', ...['docs', 'src', 'test', 'bench', 'scripts'].flatMap(files)]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    // A test's strings may be made-up paths (a fixture's made-up page); its comments name pages.
    const said = file.startsWith('test/') ? text.split('\n').filter((l) => /^\s*(\/\/|\*)/.test(l)).join('\n') : text;
    for (const [named] of said.matchAll(/(?<![\w/.])docs\/[a-z0-9-]+\.md\b/g)) {
      if (!existsSync(join(ROOT, named))) missing.add(`${file}: ${named}`);
    }
  }
  expect([...missing]).toEqual([]);
});

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { examplesPerFile, INTERACTIVE } from '../support/examples.js';

// Every example of the README, and of the docs/ pages it links for reference, runs verbatim against
// the emulator (--help's: examples.test.ts). In this order: what one page sets up, a later one may use.
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const runExamples = examplesPerFile();

// The real service's pages last: they set app_* and batches_path (as a user of that service would).
const PAGES = ['README.md', 'docs/commands.md', 'docs/logs.md', 'docs/batch.md', 'docs/scripting.md', 'docs/keys.md', 'docs/config.md', 'docs/emulator.md', 'docs/reliability.md', 'docs/library.md', 'docs/collections.md', 'docs/development.md', 'docs/real-service.md', 'docs/real-service-batches.md'];

/**
 * A job of batch run made before the first example that names one as JOB, which then gets its id. That
 * page sets the deployed service's batch place before; the emulator here keeps batches in api.md's.
 */
const MAKE_JOB = 'unset ROUTER_BATCHES_PATH; router config unset batches_path; JOB=$(router batch run requests.jsonl --model local/echo --new)';

/** Commands of a page's sh blocks, with what cannot run as written set aside. */
function pageExamples(page: string): string[] {
  const md = readFileSync(join(ROOT, page), 'utf8');
  const blocks = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ''));
  const lines = blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
    // The two install-and-run commands (they are the README's own subject) and placeholders for keys.
    .filter((l) => !/^npm (install|run|link)/.test(l) && !l.includes('…'));
  const job = lines.findIndex((l) => /\bJOB\b/.test(l));
  if (job >= 0) lines.splice(job, 0, MAKE_JOB);
  return lines.map((l) => (l === MAKE_JOB ? l : l.replace(/\bJOB\b/g, '"$JOB"')));
}

it('the README and its docs/ pages have examples to run, the job id placeholder among them', () => {
  const examples = PAGES.flatMap(pageExamples).filter((e) => !INTERACTIVE.test(e));
  expect(pageExamples('README.md').length).toBeGreaterThan(10);
  expect(examples.length).toBeGreaterThan(60);
  // The job id placeholder is run too, with a job made for it.
  expect(examples).toContain('router batch run --resume "$JOB" --resubmit-lost --watch --results out.jsonl');
  expect(pageExamples('docs/tools.md').length).toBeGreaterThan(10);
});

// A test a page, in the pages' order, each with its own bound (the whole set in one test passed in 47 s alone, and
// past its 240 s bound beside a loaded full suite). docs/tools.md's MCP examples start a server each
// (mcp-server-everything, a dependency of the tests).
for (const page of [...PAGES, 'docs/tools.md']) {
  it(`every example of ${page} runs verbatim`, async () => {
    expect(await runExamples(pageExamples(page).filter((e) => !INTERACTIVE.test(e)))).toEqual([]);
  });
}

it('the README links every page whose examples run here, and stays under 3,000 words', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const page of [...PAGES.slice(1), 'docs/tools.md']) expect(readme).toContain(`](${page})`);
  expect(readme.split(/\s+/).filter(Boolean).length).toBeLessThan(3000);
});

it('every JSON file a page\'s example reads (--tools, --input, --turns, --questions) is written by a line before it on that page', () => {
  // A newcomer has none of the files the tests make (test/support/examples.ts): tools.json, history.json and
  // dialogue.json were named, never shown, so their shape was left to guess.
  const unmade: string[] = [];
  for (const page of [...PAGES, 'docs/tools.md']) {
    const lines = pageExamples(page);
    for (const [i, line] of lines.entries()) {
      for (const [, file] of line.matchAll(/--(?:tools|input|turns|questions) ([\w.-]+\.json)\b/g)) {
        if (!lines.slice(0, i).some((l) => l.includes(`> ${file}`))) unmade.push(`${page}: ${line}`);
      }
    }
  }
  expect(unmade).toEqual([]);
});

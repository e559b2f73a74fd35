import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { examplesPerFile, INTERACTIVE } from '../support/examples.js';
import { runProcess } from '../support/run-process.js';

// docs/tools.md: its sh examples run verbatim against the emulator (as the README's), with the MCP
// servers of its examples on PATH as `npm install -g` would put them; its program runs as written.
const ROOT = resolve(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'tools.md'), 'utf8');
const path = process.env.PATH;
process.env.PATH = `${join(ROOT, 'node_modules', '.bin')}:${path}`;
afterAll(() => {
  process.env.PATH = path;
});
const runExamples = examplesPerFile();

const blocks = (lang: string) => [...PAGE.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

it('every sh example of docs/tools.md runs verbatim', async () => {
  // A line continued by ` \` lines is one example (as readme-examples.test.ts reads them).
  const examples = blocks('sh')
    .flatMap((b) => b.replace(/\\\n\s*/g, '').split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#') && !INTERACTIVE.test(l));
  expect(examples.length).toBeGreaterThan(8);
  expect(await runExamples(examples)).toEqual([]);
});

it('the program of docs/tools.md runs as written, importing router-cli/kit', async () => {
  const [program] = blocks('js');
  // Inside the package, so that its name resolves to itself (as it does where it is installed).
  const file = join(ROOT, `.docs-example-${process.pid}.mjs`);
  writeFileSync(file, program!);
  try {
    const r = await runProcess(process.execPath, [file], { env: process.env, timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Echo: hi\n');
  } finally {
    rmSync(file, { force: true });
  }
});

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { waitBound } from '../support/until.js';

// docs/library.md, docs/collections.md and the README: every program on the pages runs as written (js and cjs with node, ts with
// tsx), importing the built package by its name, against the emulator; each `// → …` comment is a line it
// prints, in order. The ts programs also pass `tsc --strict` against the package's types (its src, as the
// declarations are made from it).
const ROOT = resolve(import.meta.dirname, '..', '..');
const programsOf = (page: string) =>
  [...readFileSync(join(ROOT, page), 'utf8').matchAll(/```(js|cjs|ts)\n([\s\S]*?)```/g)].map((m) => ({ page, lang: m[1]!, code: m[2]! }));
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const blocks = ['docs/library.md', 'docs/collections.md', 'README.md'].flatMap(programsOf);

let t: CliEnv;
let work: string;
beforeAll(async () => {
  t = await startCliEnv();
  work = join(t.dir, 'library-examples');
  mkdirSync(work);
  writeFileSync(join(work, 'photo.png'), PNG);
});
afterAll(() => t?.close());

function runProgram(file: string, lang: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = lang === 'ts' ? [join(ROOT, 'node_modules', '.bin', 'tsx'), file] : [process.execPath, file];
  const env = { ...process.env, ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}` };
  return new Promise((done) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: waitBound() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The lines each program says it prints (`// → …`), missing from what it printed, in order. */
function unprinted(code: string, stdout: string): string[] {
  const printed = stdout.split('\n');
  const missing: string[] = [];
  let at = 0;
  for (const [, said] of code.matchAll(/\/\/ → (.*)$/gm)) {
    const found = printed.indexOf(said!, at);
    if (found < 0) missing.push(said!);
    else at = found + 1;
  }
  return missing;
}

it('docs/library.md, docs/collections.md and the README have programs to run', () => {
  expect(blocks.filter((b) => b.page === 'README.md').length).toBeGreaterThanOrEqual(1);
  expect(blocks.length).toBeGreaterThanOrEqual(9);
});

// A test a program, in the pages' order, each with its own bound: all in one test (a node or tsx start each) passed
// its 300 s bound at load 90, its 16th program stopped at the bound.
for (const [i, { page, lang, code }] of blocks.entries()) {
  it(`${page}'s program ${i + 1} (${lang}) runs as written and prints what its comments say`, async () => {
    // Inside the package, so that its name resolves to itself (as it does where it is installed).
    const file = join(ROOT, `.library-example-${process.pid}-${i}.${{ ts: 'mts', cjs: 'cjs' }[lang] ?? 'mjs'}`);
    writeFileSync(file, code);
    try {
      const r = await runProgram(file, lang);
      expect({ exit: r.code, missing: unprinted(code, r.stdout) }, `${code.split('\n').find((l) => l.includes('router-cli'))}\n${r.stdout}${r.stderr}`).toEqual({ exit: 0, missing: [] });
    } finally {
      rmSync(file, { force: true });
    }
  });
}

it('every ts program of docs/library.md, and every program of docs/collections.md, passes tsc --strict, as a program that installed the package checks it', async () => {
  // Was: collections.md's `docs.meta().length` (possibly undefined) failed it; its js is checked as an editor's // @ts-check would.
  const programs = blocks.filter((b) => b.lang === 'ts' || b.page === 'docs/collections.md');
  expect(programs.filter((b) => b.page === 'docs/collections.md').length).toBeGreaterThanOrEqual(1);
  const files = programs.map((p, i) => `.library-example-types-${process.pid}-${i}.${p.lang === 'ts' ? 'mts' : 'mjs'}`);
  const config = join(ROOT, `.library-example-types-${process.pid}.json`);
  const paths = { 'router-cli': ['./src/client/index.ts'], 'router-cli/kit': ['./src/kit/index.ts'], 'router-cli/batch': ['./src/batch/index.ts'] };
  // skipLibCheck as the package's own tsconfig.json (and `tsc --init`): the programs and src/ are checked, node_modules'
  // declarations only read. Without it tsc checked all of @types/node and the SDKs' too, and passed 600 s at load 30.
  writeFileSync(config, JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, allowJs: true, checkJs: true, noEmit: true, skipLibCheck: true, types: ['node'], paths }, files }));
  programs.forEach((p, i) => writeFileSync(join(ROOT, files[i]!), p.code));
  try {
    const r = await new Promise<{ code: number | null; out: string }>((done) => {
      // Ended before the test's bound: one past it ran on after the test failed, its files left in the package.
      const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: waitBound() });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      child.on('close', (code) => done({ code, out }));
    });
    expect(r.out).toBe('');
    expect(r.code, 'tsc was ended at the bound of the test').toBe(0);
  } finally {
    for (const f of [config, ...files.map((f) => join(ROOT, f))]) rmSync(f, { force: true });
  }
}, 600_000);

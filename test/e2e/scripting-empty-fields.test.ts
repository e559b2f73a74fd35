import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { runProcess } from '../support/run-process.js';

// docs/scripting.md's loops over a piped listing, run in the shells they are written for, over a row whose
// middle field is empty (a key with no limit): `IFS=$'\t' read` joins a run of tabs, so the fields after an
// empty one moved left (the key's reset read as its limit); the documented loops keep each in its place.
const ROOT = resolve(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'scripting.md'), 'utf8');
const section = PAGE.slice(PAGE.indexOf('## Reading tab-separated lines'));
const blockText = (lang: string) => new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section)?.[1]?.trim() ?? '';
/** A block's commands: a line continued by ` \\` (to fit 80 columns) read with the lines it continues. */
const block = (lang: string) => blockText(lang).replace(/\\\n\s*/g, '').split('\n');

let t: CliEnv;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startCliEnv();
  const bin = join(t.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'router'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(bin, 'router'), 0o755);
  env = { ...t.env, PATH: `${bin}:${process.env.PATH}`, ROUTER_MANAGEMENT_KEY: t.managementKey };
  // A key with a limit and a reset, and one with neither: its limit, left and reset fields are empty.
  for (const args of [['keys', 'create', 'capped', '--limit', '5', '--limit-reset', 'daily'], ['keys', 'create', 'open']]) {
    expect((await t.run(args, { env })).code).toBe(0);
  }
});
afterAll(() => t?.close());

const shell = async (name: string, line: string) => {
  const r = await runProcess(name, ['-c', line], { env: { ...process.env, ...env }, timeoutMs: 60_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  // The emulator's own keys aside: the two made here.
  return r.stdout.split('\n').filter((l) => /^(capped|open): /.test(l)).sort();
};

it('the piped row has its empty fields in place: the limit is the fifth', async () => {
  const r = await t.run(['keys', 'list'], { env });
  const open = r.stdout.split('\n').find((l) => l.split('\t')[1] === 'open')!;
  expect(open.split('\t')).toHaveLength(10);
  expect(open.split('\t')[4]).toBe('');
});

it('the naive IFS=tab read loop loses the empty field in bash and zsh (why the page says what it says)', async () => {
  const naive = `router keys list | while IFS=$'\\t' read -r hash name label state limit rest; do echo "$name: \${limit:-none}"; done`;
  for (const sh of ['bash', 'zsh']) {
    const open = (await shell(sh, naive)).filter((l) => l.startsWith('open: '));
    // Its usage (the eighth field) read as its limit.
    expect(open).toEqual(['open: 0']);
  }
});

it("every sh line of the page's section gives each key its own limit, in bash and zsh", async () => {
  const lines = block('sh');
  expect(lines.length).toBe(3);
  for (const line of lines) {
    for (const sh of ['bash', 'zsh']) expect(await shell(sh, line), `${sh}: ${line}`).toEqual(['capped: 5', 'open: none']);
  }
});

it("the page's fish loop gives each key its own limit in fish", async () => {
  // One loop, over lines as it reads in a fish script.
  expect(await shell('fish', blockText('fish'))).toEqual(['capped: 5', 'open: none']);
});

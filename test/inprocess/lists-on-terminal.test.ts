import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { textWidth } from '../../src/cli/markdown/runs.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// The lists of things kept on this machine (roles, aliases, model options, fragments) printed tab-separated lines on
// a terminal too, where a tab jumps to the next multiple of 8 (columns out of line) and a long prompt ran past the
// screen. Now: table() (or described() for one model's options) on a terminal, the same tab lines piped.
let t: CliEnv;
let env: Record<string, string>;
const LONG = `Answer as a pirate would, ${'and keep going for a very long while '.repeat(4)}then stop.`;

beforeAll(async () => {
  t = await startCliEnv();
  env = { ...t.env, HOME: t.dir, XDG_DATA_HOME: join(t.dir, 'data'), XDG_STATE_HOME: join(t.dir, 'state-home'), NO_COLOR: '1' };
  const ok = async (args: string[]) => expect((await runInProcess(args, { env })).code).toBe(0);
  await ok(['roles', 'save', 'pirate', '--system', `${LONG}\nsecond line`]);
  await ok(['roles', 'save', 'terse', '--system', 'Be\tterse.', '--model', 'local/echo']);
  await ok(['aliases', 'set', 'fast', 'local/echo']);
  await ok(['aliases', 'set', 'wordy', 'test/m']);
  await ok(['models', 'options', 'set', 'local/echo', 'temperature', '0.5']);
  await ok(['models', 'options', 'set', 'local/echo', 'max-tokens', '100']);
  writeFileSync(join(t.dir, 'notes.txt'), 'notes to keep as a fragment\n');
  await ok(['chat', '--model', 'local/echo', '-f', join(t.dir, 'notes.txt'), 'hi']);
});
afterAll(() => t?.close());

const LISTS = [
  { args: ['roles', 'list'], cells: ['pirate', 'terse', 'local/echo', 'Be\\tterse.'] },
  { args: ['aliases', 'list'], cells: ['fast', 'local/echo', 'wordy', 'test/m'] },
  { args: ['models', 'options', 'list'], cells: ['local/echo', 'temperature', '0.5', 'max-tokens', '100'] },
  { args: ['models', 'options', 'show', 'local/echo'], cells: ['temperature', '0.5', 'max-tokens', '100'] },
  { args: ['fragments', 'list'], cells: ['notes.txt', 'notes to keep'] },
];

it('on a terminal of 80 or 40 columns: no tab, every line within the screen or a block, each cell shown', async () => {
  for (const columns of [80, 40]) {
    for (const { args, cells } of LISTS) {
      const r = await runInProcess(args, { env, tty: { stdout: true }, columns });
      const what = `${args.join(' ')} at ${columns}`;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, what).not.toContain('\t');
      for (const cell of cells) expect(r.stdout, what).toContain(cell);
    }
  }
});

it('roles list on a terminal: the long prompt cut to the screen with "…", in a table whose lines all fit', async () => {
  const r = await runInProcess(['roles', 'list'], { env, tty: { stdout: true }, columns: 100 });
  const lines = r.stdout.trimEnd().split('\n');
  for (const line of lines) expect(textWidth(line), line).toBeLessThanOrEqual(100);
  expect(r.stdout).toContain('Answer as a pirate');
  expect(r.stdout).toContain('…');
  expect(r.stdout).not.toContain('second line');
});

it('piped: the same tab-separated lines as before, no header; a prompt past 80 columns says it was cut', async () => {
  const piped = async (args: string[]) => (await runInProcess(args, { env })).stdout;
  const roles = (await piped(['roles', 'list'])).split('\n');
  expect(roles[0]).toMatch(/^pirate\t\tAnswer as a pirate would, .+…$/);
  expect(textWidth(roles[0]!.split('\t')[2]!)).toBe(80);
  expect(roles[1]).toBe('terse\tlocal/echo\tBe\\tterse.');
  expect(await piped(['aliases', 'list'])).toBe('fast\tlocal/echo\nwordy\ttest/m\n');
  expect(await piped(['models', 'options', 'list'])).toBe('local/echo\ttemperature\t0.5\nlocal/echo\tmax-tokens\t100\n');
  expect(await piped(['models', 'options', 'show', 'local/echo'])).toBe('temperature\t0.5\nmax-tokens\t100\n');
  expect(await piped(['fragments', 'list'])).toMatch(/^[0-9a-f]{64}\t\t\S+\t\S*notes\.txt\tnotes to keep/);
});

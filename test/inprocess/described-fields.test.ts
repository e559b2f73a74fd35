import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// One rule for what describes one thing (src/cli/io/described.ts): on a terminal `name  value` lines, the values in one
// column two spaces past the longest name; piped, tab-separated fields, never spaces that align. Was: `auth status`
// aligned with spaces piped too (`profile   default`), where `generation` printed `name<TAB>value`; each command
// padded its names by hand (to 8, 9 or the longest).
let t: CliEnv;
let batchId: string;
let generation: string;
let hash: string;

beforeAll(async () => {
  ({ t, batchId } = await startCliEnvWithBatch());
  generation = (await t.run(['chat', '--no-stream', '--json', '--jq', '.id', '--model', 'local/echo', 'hi'])).stdout.trim();
  hash = (await t.run(['keys', 'list', '--jq', '.[0].hash'], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } })).stdout.trim();
});
afterAll(() => t.close());

const run = (args: string[], tty: boolean) =>
  runInProcess(args, { env: { ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey }, tty: { stdin: false, stdout: tty, stderr: false }, columns: 200 });

/** Each command that describes one thing; `row`: piped, it is its list's line (one row of fields), else name<TAB>value lines. */
const described = (): { args: string[]; row: boolean }[] => [
  { args: ['auth', 'status'], row: false },
  { args: ['generation', generation], row: false },
  { args: ['keys', 'get', hash], row: true },
  { args: ['keys', 'current'], row: true },
  { args: ['credits'], row: true },
  { args: ['batch', 'get', batchId], row: true },
];

it('piped, each is tab-separated fields: name<TAB>value lines, or its list\'s one line; no spaces align anything', async () => {
  for (const { args, row } of described()) {
    const r = await run(args, false);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    if (row) expect(lines.length, args.join(' ')).toBe(1);
    else for (const line of lines) expect(line, args.join(' ')).toMatch(/^[a-z][a-z ]*[a-z]\t\S/);
    expect(r.stdout, args.join(' ')).not.toMatch(/\S {2,}\S/);
  }
});

it('on a terminal, each is name  value lines, every value in one column two spaces past the longest name', async () => {
  for (const { args } of described()) {
    const r = await run(args, true);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const names = lines.map((l) => /^(\S+(?: \S+)?) +/.exec(l)![1]!);
    const column = Math.max(...names.map((n) => n.length)) + 2;
    expect(lines.map((l, i) => l.slice(names[i]!.length, column).trim() === '' && l[column] !== ' '), args.join(' ')).toEqual(lines.map(() => true));
  }
});

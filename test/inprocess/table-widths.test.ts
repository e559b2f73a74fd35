import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { textWidth } from '../../src/cli/markdown/runs.js';
import { PROSE, visible } from '../../src/internal/visible.js';
import type { FixtureServer } from '../support/fixture-server.js';
import { runInProcess } from '../support/inprocess.js';
import { EMOJI_NAMES, ODD_NAMES, oddNamesLedger, oddNamesServer } from '../support/odd-names.js';

// One table for the CLI (src/cli/io/table.ts): cells padded by the columns a terminal gives them, a server's control
// characters shown escaped. Was: `models` and `batch list` padded by string length (a CJK name pushed its row's later
// columns 6 to the right, a combining mark pulled them 2 left) and printed `\x1b]0;…\x1b[2J` raw (a retitled window,
// a cleared screen); the other tables (cli-table3) measured a zero-width space as one column and printed escapes raw.
const NAMES = [...ODD_NAMES, ...EMOJI_NAMES];
let server: FixtureServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await oddNamesServer(NAMES);
  dir = mkdtempSync(join(tmpdir(), 'router-table-widths-'));
  oddNamesLedger(dir, NAMES);
  env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: dir, XDG_CACHE_HOME: join(dir, 'cache'), NO_COLOR: '1' };
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const onTerminal = (args: string[]) => runInProcess(args, { env, tty: { stdout: true }, columns: 200 });
const piped = (args: string[]) => runInProcess(args, { env });
/** The screen column where `cell` starts in `line`. */
const columnOf = (line: string, cell: string) => textWidth(line.slice(0, line.indexOf(cell)));
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
/** A format character (Cf: zero-width, soft hyphen, bidi control) printed raw, outside the emoji names' own sequences. */
const hidden = (out: string) => EMOJI_NAMES.reduce((o, n) => o.replaceAll(n, ''), out).match(/\p{Cf}/gu);

it('models and batch list on a terminal: every column starts at one screen column in every row, escapes shown escaped', async () => {
  // Each row's number cell (context, or the batch's total) is found by its own value; the head's by its name.
  const cases = [
    { args: ['models', '--refresh'], head: 'context', cell: (i: number) => String(1000 + i * 1111) },
    { args: ['batch', 'list'], head: 'done/failed/total', cell: (i: number) => `1/0/${1000 + i * 1111}` },
  ];
  for (const { args, head, cell } of cases) {
    const r = await onTerminal(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout, args.join(' ')).not.toMatch(CONTROL);
    expect(r.stdout).toContain('evil\\u001b]0;pwned\\u0007\\u001b[2J');
    expect(r.stdout).toContain('tab\\there');
    expect(hidden(r.stdout), args.join(' ')).toBeNull();
    expect(r.stdout).toContain('rtl\\u202egpj.exe');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(NAMES.length + 1);
    const at = columnOf(lines[0]!, head);
    expect(NAMES.map((_, i) => columnOf(lines.find((l) => l.includes(cell(i)))!, cell(i))), args.join(' ')).toEqual(NAMES.map(() => at));
  }
});

it('usage --by model, borderless as every table: each row ends at one screen column, its last cell under the head\'s', async () => {
  const r = await onTerminal(['usage', '--by', 'model']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).not.toMatch(CONTROL);
  expect(hidden(r.stdout)).toBeNull();
  expect(r.stdout).toContain('evil\\u001b]0;pwned\\u0007\\u001b[2J');
  expect(r.stdout).toContain('soft\\u00adhyphen');
  expect(r.stdout).not.toMatch(/[│┼├┤┬┴┌┐└┘─]/);
  const [head, ...all] = r.stdout.trimEnd().split('\n');
  // A row per model, then the total.
  expect(all).toHaveLength(NAMES.length + 1);
  const rows = all.slice(0, -1);
  // Every model's one call cost the same: the last column, unpadded, ends every row at one screen column.
  const cost = rows[0]!.split(/ +/).at(-1)!;
  expect(rows.map((l) => l.endsWith(cost) && textWidth(l))).toEqual(rows.map(() => textWidth(rows[0]!)));
  expect(columnOf(head!, 'cost')).toBe(textWidth(rows[0]!) - textWidth(cost));
});

it('a fitted column is cut by screen columns, between letters: a wide name never pushes the table past the terminal', async () => {
  for (let columns = 40; columns <= 80; columns += 4) {
    for (const args of [['models'], ['batch', 'list']]) {
      const r = await runInProcess(args, { env, tty: { stdout: true }, columns });
      expect(r.code, r.stderr).toBe(0);
      for (const line of r.stdout.trimEnd().split('\n')) expect(textWidth(line), `${columns}: ${line}`).toBeLessThanOrEqual(columns);
      expect(r.stdout).not.toContain('\ufffd');
    }
  }
});

it('piped, the same lists are tab-separated fields, a server\'s control characters escaped: one line a record', async () => {
  const models = (await piped(['models', '--refresh'])).stdout.trimEnd().split('\n');
  const batches = (await piped(['batch', 'list'])).stdout.trimEnd().split('\n');
  for (const lines of [models, batches]) {
    expect(lines).toHaveLength(NAMES.length);
    for (const line of lines) expect(line.split('\t'), line).toHaveLength(6);
    for (const line of lines) for (const field of line.split('\t')) expect(field).not.toMatch(CONTROL);
  }
  expect(models).toContain('acme/m1\te\u0301mile\u0301\t2111\t1.00\t2.00\ttext->text');
  expect(batches.find((l) => l.startsWith('batch_3\t'))).toContain('evil\\u001b]0;pwned\\u0007\\u001b[2J');
});

it('text joined into one emoji (👨‍👩‍👧) takes the columns of one picture', () => {
  expect(textWidth('👨‍👩‍👧')).toBe(2);
  expect(textWidth('🎉 party')).toBe(8);
  expect(textWidth('日本語')).toBe(6);
  expect(textWidth('e\u0301')).toBe(1);
});

it('invisible format characters escaped as controls are, a joiner inside an emoji and the tags of a flag kept', () => {
  // Was: only controls and bidi overrides escaped; a zero-width space, a soft hyphen, a lone joiner, a byte-order mark
  // printed raw (one column to cli-table3, none on a terminal: the row one column short).
  expect(visible('zero\u200bwidth soft\u00adhy lone\u200djoiner \ufeffbom \u2060wj')).toBe('zero\\u200bwidth soft\\u00adhy lone\\u200djoiner \\ufeffbom \\u2060wj');
  expect(visible('rtl\u202egpj.exe iso\u2067late\u2069d')).toBe('rtl\\u202egpj.exe iso\\u2067late\\u2069d');
  expect(visible('a\u{e0067}')).toBe('a\\u{e0067}');
  for (const emoji of ['👨‍👩‍👧', '👍🏽‍🔥', '❤️‍🔥', '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}']) expect(visible(emoji)).toBe(emoji);
  // Text of several lines (an answer) keeps the joiners Persian and Indic words are spelled with.
  expect(visible('می\u200cخواهم क्\u200dष', PROSE)).toBe('می\u200cخواهم क्\u200dष');
  expect(visible('می\u200cخواهم')).toBe('می\\u200cخواهم');
});

it('a skin tone after an emoji takes no column of its own, as most terminals and cli-table3 show it', () => {
  expect(textWidth('👍🏽')).toBe(2);
  expect(textWidth('👍🏽 thumbs')).toBe(stringWidth('👍🏽 thumbs'));
  expect(textWidth('🏽')).toBe(2);
  expect(textWidth('🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}')).toBe(2);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import type { FixtureServer } from '../support/fixture-server.js';
import { ODD_NAMES, oddNamesLedger, oddNamesServer } from '../support/odd-names.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// The tables as a real terminal (tmux) lays them out: every line of a table as wide as every other, by the terminal's
// count of columns, not ours. Drawn at 160 columns, the window is then narrowed to the table's width W (tmux reflows
// what it shows): no line may wrap; then to W - 1: each must (a line narrower than the rest would not). Was: the
// borderless tables padded by string length (a CJK name's row 6 columns wider), cli-table3 counted a zero-width
// space as a column, and both printed a server's `\x1b[2J` raw, which cleared the screen in the middle of the table.
// Then (cli-table3 again, cells made safe first; since c20 every table borderless): a zero-width space, soft hyphen, lone joiner and byte-order mark shown
// escaped, so string-width and tmux agree on them. The emoji names (odd-names.ts EMOJI_NAMES) are not drawn here: tmux
// 3.3a shows a skin tone as four columns where most terminals and string-width show two.
let server: FixtureServer;
let dir: string;
let term: Terminal | undefined;

beforeAll(async () => {
  server = await oddNamesServer(ODD_NAMES);
  dir = mkdtempSync(join(tmpdir(), 'router-table-terminal-'));
  oddNamesLedger(dir, ODD_NAMES);
});
afterEach(async () => {
  await term?.close();
  term = undefined;
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: dir, XDG_CACHE_HOME: join(dir, 'cache'), HOME: dir });

/** The screen's rows once the window is `columns` wide (tmux reflows the lines it has). */
async function linesAt(t: Terminal, columns: number): Promise<string[]> {
  t.resize(columns, 50);
  // tmux answers commands in order: the capture after the resize sees the reflowed screen.
  return t.rows();
}

describe.skipIf(!HAS_TMUX)('tables on a real terminal', () => {
  it('usage --by model, borderless as every table: every row with the same cost as wide as the others', async () => {
    term = new Terminal(env());
    term.run(`node ${BIN} usage --by model`);
    const screen = await term.waitFor(/^total .*\n\$\s*$/m);
    expect(screen).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(screen).not.toMatch(/[│┼├┤┬┴┌┐└┘─]/);
    expect(screen).toContain('evil\\u001b]0;pwned\\u0007\\u001b[2J');
    // Every model's one call cost the same: the last column, unpadded, ends each model's row at one column.
    const cost = /^evil.* (\S+)$/m.exec(screen)![1]!;
    const row = new RegExp(`  ${cost.replaceAll('$', '\\$')}$`);
    const drawn = screen.split('\n').filter((l) => row.test(l) && !l.startsWith('total'));
    expect(drawn).toHaveLength(ODD_NAMES.length);
    const width = [...drawn[0]!].length;
    expect((await linesAt(term, width)).filter((l) => row.test(l) && !l.startsWith('total'))).toEqual(drawn);
    expect((await linesAt(term, width - 1)).filter((l) => row.test(l) && !l.startsWith('total'))).toEqual([]);
  });

  it('a borderless table (models): every row as wide as its head', async () => {
    term = new Terminal(env());
    term.run(`node ${BIN} models --refresh`);
    const screen = await term.waitFor(/text->text\n\$\s*$/);
    expect(screen).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    // The last column is "modalities" in the head and "text->text" in every row: as many letters, so every line ends
    // at one column when the columns before it line up.
    const row = /(modalities|text->text)$/;
    const drawn = screen.split('\n').filter((l) => row.test(l));
    expect(drawn).toHaveLength(ODD_NAMES.length + 1);
    const width = [...drawn[0]!].length;
    expect((await linesAt(term, width)).filter((l) => row.test(l))).toEqual(drawn);
    expect((await linesAt(term, width - 1)).filter((l) => row.test(l))).toEqual([]);
  });
});

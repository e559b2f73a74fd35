import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { runInProcess } from '../support/inprocess.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// The lists of what is kept on this machine on a real terminal (tmux) of 80 columns: a table whose every line fits
// the window, the long prompt cut with "…". Was: tab-separated lines, each tab jumping to the next multiple of 8
// (`roles list`'s prompt began at column 8 or 16 by the name's length, and ran past the window onto the next rows);
// then a cli-table3 box, where `models` and `batch list` were borderless: now every table is (gh's columns).
let dir: string;
let term: Terminal | undefined;
const env = () => ({ ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CACHE_HOME: join(dir, 'cache'), HOME: dir, ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '1' });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-lists-terminal-'));
  const ok = async (args: string[]) => expect((await runInProcess(args, { env: env() })).code).toBe(0);
  await ok(['roles', 'save', 'pirate', '--system', `Answer as a pirate would, ${'and keep going '.repeat(8)}then stop.`]);
  await ok(['roles', 'save', 'a-longer-name', '--system', 'Be terse.', '--model', 'local/echo']);
  await ok(['aliases', 'set', 'fast', 'local/echo']);
  await ok(['aliases', 'set', 'a-much-longer-alias', 'test/m']);
});
afterEach(async () => {
  await term?.close();
  term = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!HAS_TMUX)('lists on a real terminal of 80 columns', () => {
  it('roles list and aliases list: borderless columns (as every table), every line within the window, none wrapped', async () => {
    term = new Terminal(env());
    term.resize(80, 50);
    for (const [n, [args, head, cells]] of ([['roles list', /^name +model +prompt$/, ['pirate', 'a-longer-name', 'local/echo', '…']], ['aliases list', /^alias +model$/, ['a-much-longer-alias', 'test/m']]] as const).entries()) {
      // The marker printed (BEGIN0) is not the one typed ("BEG""IN0"): the lines between are the program's own.
      term.run(`clear; echo "BEG""IN${n}"; node ${BIN} ${args}; echo "END""${n}"`);
      const ours = (lines: string[]) => lines.slice(lines.indexOf(`BEGIN${n}`) + 1, lines.indexOf(`END${n}`));
      const drawn = ours((await term.waitFor(new RegExp(`^END${n}$`, 'm'))).split('\n'));
      expect(drawn[0], args).toMatch(head);
      // The rows the window shows are the lines printed: none wrapped.
      expect(ours((await term.rows()).map((l) => l.trimEnd())), args).toEqual(drawn);
      for (const line of drawn) expect([...line].length, `${args}: ${line}`).toBeLessThanOrEqual(80);
      expect(drawn.join('\n'), args).not.toMatch(/[│┼├┤┬┴┌┐└┘─]/);
      for (const cell of cells) expect(drawn.join('\n'), args).toContain(cell);
    }
  });
});

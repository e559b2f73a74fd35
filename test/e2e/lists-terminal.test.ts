import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { runInProcess } from '../support/inprocess.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// The lists of what is kept on this machine on a real terminal (tmux) of 80 columns: a table whose every line fits
// the window, the long prompt cut with "…". Was: tab-separated lines, each tab jumping to the next multiple of 8
// (`roles list`'s prompt began at column 8 or 16 by the name's length, and ran past the window onto the next rows).
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
  it('roles list and aliases list: a box whose every line fits the window, nothing run onto the next row', async () => {
    term = new Terminal(env());
    term.resize(80, 50);
    for (const [args, cells] of [['roles list', ['pirate', 'a-longer-name', 'local/echo', '…']], ['aliases list', ['a-much-longer-alias', 'test/m']]] as const) {
      term.run(`clear; node ${BIN} ${args}`);
      const screen = await term.waitFor(/└[─┴]+┘\n\$\s*$/);
      const drawn = screen.split('\n').filter((l) => /^[┌│├└]/.test(l));
      // The rows the window shows are the lines drawn: none wrapped.
      const rows = (await term.rows()).filter((l) => /^[┌│├└]/.test(l));
      expect(rows, args).toEqual(drawn);
      for (const line of drawn) expect([...line].length, `${args}: ${line}`).toBeLessThanOrEqual(80);
      expect(new Set(drawn.map((l) => [...l].length)).size, args).toBe(1);
      for (const cell of cells) expect(screen, args).toContain(cell);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// A question of @inquirer/prompts on a real terminal (tmux): --no-color and NO_COLOR leave it uncolored, as every
// other line router draws. Was: @inquirer/prompts colors by process.env alone (yoctocolors), so --no-color's
// question came in blue and bold.
const open = terminalsOnEmulator(() => {});
const SGR = /\x1b\[[0-9;]*m/;

describe.skipIf(!HAS_TMUX)('a prompt on a terminal and color', () => {
  it('config init asks in color by default, without any under --no-color or NO_COLOR', async () => {
    for (const [extra, flag, colored] of [['', '', true], ['', ' --no-color', false], [' NO_COLOR=1', '', false]] as const) {
      const term = await open();
      // As a person's shell has it: no FORCE_COLOR (the test runner's own would color everything).
      term.run(`env -u FORCE_COLOR -u NO_COLOR${extra} node ${BIN} config init${flag}`);
      await term.waitFor(/API root/);
      const screen = await term.screen(true);
      expect(SGR.test(screen.slice(screen.indexOf('config init'))), `${flag}${extra}:\n${screen}`).toBe(colored);
      term.keys('C-c');
      expect(await term.lastExit()).toBe(130);
    }
  });
});

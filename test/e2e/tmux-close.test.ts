import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// The terminal helper itself: a test removes its folder right after closing the terminal.
describe.skipIf(!HAS_TMUX)('Terminal.close', () => {
  it('resolves once the shell and what it started have written their last files', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-tmux-'));
    const term = new Terminal({ HOME: home });
    // As bash saving $HOME/.bash_history as it hangs up, or a program it started saving its state, slower: what a
    // loaded machine can make of it.
    term.run(`(trap '' HUP; sleep 0.5; echo bye > "$HOME/last") &`);
    term.run('echo READY');
    await term.waitFor(/^READY/m);
    await term.close();
    expect(existsSync(join(home, 'last'))).toBe(true);
    rmSync(home, { recursive: true });
  });
});

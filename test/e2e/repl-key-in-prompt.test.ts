import { describe, expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// chat -i says, as a one-shot chat does, that a message holding a key router knows is sent and kept as typed
// (docs/keys.md); a message without one is not warned about. On a real terminal (tmux, a socket of its own).
const WARNING = 'warning: the prompt holds a key router knows (****): it is sent to the model as typed';
let t: TestEnv;
const open = terminalsOnEmulator((started) => (t = started));

describe.skipIf(!HAS_TMUX)('router chat -i: a key in a message', () => {
  it('is said on stderr for the turn that holds it, not for one without it; the answer shows it as ****', async () => {
    const term = await open();
    term.run(`node ${BIN} chat -i --raw --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('no key here');
    await term.waitFor(/^no key here$/m);
    await term.waitFor(/^>\s*$/m);
    expect(await term.screen()).not.toContain('warning');
    term.run(`mine is ${t.env.ROUTER_API_KEY}`);
    await term.waitFor(/^mine is \*\*\*\*$/m);
    await term.waitFor(/^>\s*$/m);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
    const screen = (await term.screen()).replace(/\n/g, '');
    expect(screen).toContain(WARNING);
    expect(screen.split('warning:').length - 1).toBe(1);
  });
});

/** `router config init` prompts on a real terminal (tmux): the hidden key, Ctrl-C, Ctrl-Z and fg, an empty key asked again. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TestEnv } from '../helpers.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { emulatorWithTerminal, ROUTER as router } from '../support/terminal-file.js';

// Keys pressed on a real terminal (tmux), not signals sent to the process.
let t: TestEnv;
let term: Terminal;

emulatorWithTerminal({ batchDelayMs: 300 }, (started) => (t = started), () => term);

/** Answers config init's questions from the API key on (no management key), and waits for its profile to be saved. */
async function answerFromKey(model: string, profile = 'default'): Promise<void> {
  term.run(t.apiKey);
  await term.waitFor(/Management key/);
  term.run('');
  await term.waitFor(/Default model/);
  term.run(model);
  await term.waitFor(new RegExp(`saved profile "${profile}"`));
  expect(await term.lastExit()).toBe(0);
}

describe.skipIf(!HAS_TMUX)('prompts on a terminal', () => {
  it('config init asks on the terminal (the key hidden) and saves; Ctrl-C at a prompt of login exits 130 and saves nothing', async () => {
    const config = join(t.dir, 'prompt-config');
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_CONFIG_DIR: config, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' });
    term.run(`${router} config init --profile asked`);
    await term.waitFor(/API root/);
    term.keys('C-u');
    term.run(t.apiRoot);
    await term.waitFor(/API key/);
    await answerFromKey('local/echo', 'asked');
    expect(await term.screen()).not.toContain(t.apiKey);
    term.run(`${router} chat --profile asked "from the profile"`);
    await term.waitFor(/^from the profile$/m);
    term.run(`${router} login --profile other`);
    // login's own prompt: "API key" is on the screen already, from config init.
    await term.waitFor(/login --profile other\n.*API key/);
    term.keys('C-c');
    // Ctrl-C inside a prompt reads as it does anywhere else.
    await term.waitFor(/API key.*\n(.*\n)?error: interrupted$/m);
    expect(await term.lastExit()).toBe(130);
    const shown = await t.run(['config', 'list', '--json'], { env: { ROUTER_CONFIG_DIR: config } });
    expect(Object.keys(JSON.parse(shown.stdout).profiles ?? JSON.parse(shown.stdout))).not.toContain('other');
    expect(await term.screen()).not.toMatch(/^\s+at /m);
  });

  it('config init goes on after Ctrl-Z and fg: the answer typed so far is kept', async () => {
    const config = join(t.dir, 'stopped-config');
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_CONFIG_DIR: config, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' });
    term.run(`${router} config init`);
    await term.waitFor(/API root/);
    term.keys('C-u');
    term.type(t.apiRoot.slice(0, -3));
    term.keys('C-z');
    await term.waitFor(/Stopped.*\n\$\s*$/);
    term.run('fg');
    await term.waitFor(/^\$ fg\n.*config init\s*$/m);
    term.run(t.apiRoot.slice(-3));
    await term.waitFor(/API key/);
    await answerFromKey('');
    const shown = await t.run(['config', 'get', 'api_root'], { env: { ROUTER_CONFIG_DIR: config, ROUTER_API_ROOT: '' } });
    expect(shown.stdout.trim()).toBe(t.apiRoot);
  });

  it('config init asks again at once for an API key left empty, not after the questions that follow it', async () => {
    const config = join(t.dir, 'empty-key-config');
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_CONFIG_DIR: config, ROUTER_API_KEY: '', ROUTER_API_ROOT: t.apiRoot });
    term.run(`${router} config init`);
    await term.waitFor(/API root/);
    term.run('');
    await term.waitFor(/API key/);
    term.run('');
    await term.waitFor(/a profile needs an API key/);
    expect(await term.screen()).not.toContain('Management key');
    await answerFromKey('');
  });
});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// chat -i with --tools/--mcp (issue 44), on a real terminal (tmux): each turn runs the calls; /tools lists them.
const FIXTURE = join(resolve(import.meta.dirname, '..', '..'), 'test/support/mcp-fixture-server.mjs');
let t: TestEnv;
const open = terminalsOnEmulator((started) => (t = started));

describe.skipIf(!HAS_TMUX)('router chat -i --mcp on a terminal', () => {
  it('a turn answers from the MCP tool (its environment without the key); /tools names it and its server', async () => {
    const term = await open();
    term.run(`node ${BIN} chat -i --raw --model local/tools --mcp "node ${FIXTURE} env"`);
    await term.waitFor(/^>\s*$/m);
    term.run('env');
    await term.waitFor(/env answered: \{/);
    await term.waitFor(/^>\s*$/m);
    term.run('/tools');
    await term.waitFor(/env {2}\(mcp fixture-env\) {2}the env tool/);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
    const screen = await term.screen();
    expect(screen).not.toContain(t.env.ROUTER_API_KEY);
  });

  it('a stdio MCP server has no terminal (as a tool command has none): what it writes to /dev/tty never reaches the screen', async () => {
    const term = await open();
    term.run(`node ${BIN} chat --model local/tools --mcp "node ${FIXTURE} tty" tty`);
    await term.waitFor(/tty answered: no terminal \(ENXIO\)/);
    expect(await term.lastExit()).toBe(0);
    expect(await term.screen()).not.toContain('THE SERVER WROTE ON THE TERMINAL');
  });

  it('--approve asks before an MCP tool too; a refusal goes back to the model, the tool never runs', async () => {
    const term = await open();
    term.run(`node ${BIN} chat --model local/tools --mcp "node ${FIXTURE} hang ${join(t.dir, 'approve.pid')}" --approve "hang"`);
    await term.waitFor(/Run hang \{"text":"hang"\}\?/);
    term.keys('n', 'Enter');
    await term.waitFor(/hang answered: the user declined to run this tool/);
    expect(await term.lastExit()).toBe(0);
    // The hang tool writes this file when called: it was not.
    expect(existsSync(join(t.dir, 'approve.pid.called'))).toBe(false);
  });
  it('chat -i --approve asks before each local and MCP tool: yes runs it, no tells the model, Ctrl-C stops the answer', async () => {
    const ran = join(t.dir, 'weather.ran');
    const tools = join(t.dir, 'repl-approve-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } }, command: `echo ran >> ${ran}; echo sunny` }]));
    const term = await open();
    term.run(`node ${BIN} chat -i --raw --model local/tools --tools ${tools} --mcp "node ${FIXTURE} hang ${join(t.dir, 'repl-approve.pid')}" --approve`);
    await term.waitFor(/^>\s*$/m);
    term.run('weather');
    await term.waitFor(/Run weather \{\}\?/);
    term.keys('y', 'Enter');
    await term.waitFor(/weather answered: sunny/);
    await term.waitFor(/^>\s*$/m);
    term.run('hang');
    await term.waitFor(/Run hang \{"text":"hang"\}\?/);
    term.keys('n', 'Enter');
    await term.waitFor(/hang answered: the user declined to run this tool/);
    await term.waitFor(/^>\s*$/m);
    term.run('weather again');
    await term.waitFor(/Run weather \{\}\?[\s\S]*Run weather \{\}\?/);
    term.keys('C-c');
    await term.waitFor(/\(answer stopped\)\s*\n>\s*$/m);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
    // Run once (the yes); the no and the Ctrl-C ran nothing: the hang tool writes its file when called.
    expect(readFileSync(ran, 'utf8')).toBe('ran\n');
    expect(existsSync(join(t.dir, 'repl-approve.pid.called'))).toBe(false);
  });
});

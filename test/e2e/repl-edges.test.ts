import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers.js';
import { ROUTER as router, terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// Issue 46: the REPL's edges, on a real terminal (tmux).
let t: TestEnv;
const terminal = terminalsOnEmulator((started) => (t = started));
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64');

describe.skipIf(!HAS_TMUX)('router chat -i', () => {
  it('/help lists one command a line; /model checks the id against the model list and keeps the model on a miss', async () => {
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/\/help lists the commands[^\n]*\n>\s*$/m);
    term.run('/help');
    const help = await term.waitFor(/^\/exit +end the session[^\n]*\n(?:[^\n]*\n)*>\s*$/m);
    for (const cmd of ['/model ID', '/system TEXT', '/role NAME', '/attach PATH|URL', '/edit', '/save FILE', '/clear', '/help']) expect(help).toMatch(new RegExp(`^${cmd.replace(/[|/]/g, '\\$&')} +\\S`, 'm'));
    term.run('/model local/ecko');
    await term.waitFor(/^error: \/model: local\/ecko is not in the model list \(did you mean local\/echo\? the list: router models\); the model stays\n>\s*$/m);
    term.run('still echo');
    await term.waitFor(/^still echo\n>\s*$/m);
    term.run('/model local/lorem');
    await term.waitFor(/^model: local\/lorem\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('/attach errors name /attach; a pending image the new model cannot take is named with /clear', async () => {
    const png = join(t.dir, 'pending.png');
    writeFileSync(png, PNG);
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/vision`);
    await term.waitFor(/^>\s*$/m);
    term.run(`/attach ${join(t.dir, 'missing.png')}`);
    await term.waitFor(/^error: \/attach \S*missing\.png: cannot read it \(no such file or folder\)\n>\s*$/m);
    term.run(`/attach ${png}`);
    await term.waitFor(/attached \S*pending\.png/);
    term.run('/model local/echo');
    await term.waitFor(/^model: local\/echo\nnote: local\/echo takes text: the pending attachment pending\.png \(image\) would be refused; \/clear drops it, or switch back with \/model\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('Ctrl-C on the next line of a message (after \\) drops that message and stays; the next one goes alone', async () => {
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('dropped part \\');
    await term.waitFor(/^\.\s*$/m);
    term.keys('C-c');
    await term.waitFor(/^\(message dropped\)\n>\s*$/m);
    term.run('kept');
    await term.waitFor(/^kept\n>\s*$/m);
    expect(await term.screen()).not.toMatch(/^dropped part\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('Ctrl-Z, then fg: the line typed so far is kept and the session goes on', async () => {
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.type('before stop');
    term.keys('C-z');
    await term.waitFor(/Stopped.*\n\$\s*$/);
    term.run('fg');
    await term.waitFor(/^> before stop\s*$/m);
    term.run(' and after');
    await term.waitFor(/^before stop and after\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('/save notes.md writes the conversation as Markdown; another name as JSON', async () => {
    const md = join(t.dir, 'notes.md');
    const json = join(t.dir, 'notes.json');
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('first line');
    await term.waitFor(/^first line\n>\s*$/m);
    term.run(`/save ${md}`);
    await term.waitFor(/saved 2 messages to \S*notes\.md\n>\s*$/m);
    term.run(`/save ${json}`);
    await term.waitFor(/saved 2 messages to \S*notes\.json\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    expect(readFileSync(md, 'utf8')).toBe('# Conversation with local/echo\n\n## user\n\nfirst line\n\n## assistant\n\nfirst line\n');
    expect(JSON.parse(readFileSync(json, 'utf8')).messages).toHaveLength(2);
  });

  it('/save over a file that exists keeps the file and says how to replace it: /save! FILE', async () => {
    const file = join(t.dir, 'kept.json');
    writeFileSync(file, 'another conversation\n');
    const term = await terminal({ ROUTER_NO_LOG: '1' });
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('first line');
    await term.waitFor(/^first line\n>\s*$/m);
    // Was: "saved 2 messages to …", the file there replaced without a word.
    term.run(`/save ${file}`);
    await term.waitFor(/^error: \/save: \S*kept\.json exists: \/save! \S*kept\.json replaces it, or give another name\n>\s*$/m);
    expect(readFileSync(file, 'utf8')).toBe('another conversation\n');
    term.run(`/save! ${file}`);
    await term.waitFor(/saved 2 messages to \S*kept\.json\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).messages).toHaveLength(2);
  });
});

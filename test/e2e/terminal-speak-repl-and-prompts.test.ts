/** Edges only a real terminal (tmux) shows beyond the spinner: speak refusing to write audio to it, Ctrl-D and SIGTERM in chat -i, /save, config init redrawn after fg. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers.js';
import { ROUTER as router, terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// The edges of the CLI that only a real terminal (tmux) shows: what is drawn, cleared and refused there.
let t: TestEnv;
const terminal = terminalsOnEmulator((started) => (t = started));

describe.skipIf(!HAS_TMUX)('speak and a terminal', () => {
  const speak = `${router} speak hi --voice alloy --model local/tts`;
  const refusal = (named: string) => new RegExp(`^error: refusing to write audio to a terminal${named}: redirect stdout \\(> out\\.mp3\\) or give -o FILE \\(-o out\\.mp3\\)$`, 'm');

  it('-o naming a terminal (/dev/tty, /dev/stdout on one) is refused in one line, exit 2, nothing sent', async () => {
    const term = await terminal();
    t.clearRequests();
    for (const path of ['/dev/tty', '/dev/stdout']) {
      term.run(`${speak} -o ${path}`);
      await term.waitFor(refusal(` \\(-o ${path}\\)`));
      expect(await term.lastExit()).toBe(2);
    }
    term.run(speak);
    await term.waitFor(refusal(''));
    expect(await term.lastExit()).toBe(2);
    expect(t.requests().filter((r) => r.path === '/v1/audio/speech')).toEqual([]);
  });

  it('-o /dev/null, a device that is no terminal, is still written', async () => {
    const term = await terminal({ ROUTER_MANAGEMENT_KEY: t.managementKey });
    t.clearRequests();
    term.run(`${speak} -o /dev/null`);
    expect(await term.lastExit()).toBe(0);
    expect(t.requests().filter((r) => r.path === '/v1/audio/speech')).toHaveLength(1);
  });
});

describe.skipIf(!HAS_TMUX)('Ctrl-D in chat -i', () => {
  it('on a ". " line sends the message typed so far and the session goes on; on an empty prompt it exits 0', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('first line\\');
    await term.waitFor(/^\.\s*$/m);
    term.run('second line\\');
    await term.waitFor(/^\. second line\\\n\.\s*$/m);
    term.keys('C-d');
    // local/echo answers with the message it got (Markdown joins its two lines on the screen).
    await term.waitFor(/^first line\s+second line\n>\s*$/m);
    expect(t.requests().filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.messages.at(-1).content)).toEqual(['first line\nsecond line']);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('config init after Ctrl-Z and fg', () => {
  it('draws the question again at once, with the answer typed so far, before any key', async () => {
    const term = await terminal({ ROUTER_CONFIG_DIR: join(t.dir, 'redrawn-config'), ROUTER_API_KEY: '', ROUTER_API_ROOT: '' });
    term.run(`${router} config init`);
    await term.waitFor(/API root/);
    term.keys('C-u');
    term.type('http://half.typed');
    await term.waitFor(/API root.*http:\/\/half\.typed/);
    term.keys('C-z');
    await term.waitFor(/Stopped.*\n\$\s*$/);
    term.run('fg');
    await term.waitFor(/^\$ fg\n.*config init\n.*API root.*http:\/\/half\.typed\s*$/m);
    term.run('/api');
    await term.waitFor(/API key/);
    term.keys('C-c');
    expect(await term.lastExit()).toBe(130);
  });
});

describe.skipIf(!HAS_TMUX)('/save as Markdown', () => {
  it('is titled with the models that answered, and names an attachment as it was given', async () => {
    const png = join(t.dir, 'shot.png');
    writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
    const md = join(t.dir, 'saved.md');
    const term = await terminal();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('plain');
    await term.waitFor(/^plain\n>\s*$/m);
    term.run('/model local/vision');
    await term.waitFor(/^model: local\/vision\n>\s*$/m);
    term.run(`/attach ${png}`);
    await term.waitFor(/attached .*shot\.png/);
    term.run('what is it?');
    await term.waitFor(/2x3 pixels\n>\s*$/m);
    // Switched to, never answered: not in the title.
    term.run('/model local/lorem');
    await term.waitFor(/^model: local\/lorem\n>\s*$/m);
    term.run(`/save ${md}`);
    await term.waitFor(/saved 4 messages/);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    const saved = readFileSync(md, 'utf8');
    expect(saved).toMatch(/^# Conversation with local\/echo, local\/vision\n/);
    expect(saved).toMatch(/## user\n\nwhat is it\?\n\[attachment: shot\.png \(image\/png, 75 bytes, sha256:[0-9a-f]{64}\)\]\n/);
    expect(saved).not.toMatch(/image_url/);
  });
});

describe.skipIf(!HAS_TMUX)('chat -i and SIGTERM', () => {
  it('at the prompt: the prompt\'s line ends, "error: terminated", exit 143 at once (before: the 1 s fallback, nothing said)', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'repl-sigterm-')), 'pid');
    const term = await terminal();
    term.run(`bash -c 'echo $$ > ${pidFile}; exec ${router} chat -i --model local/echo'`);
    await term.waitFor(/^>\s*$/m);
    term.run('hello');
    await term.waitFor(/^hello\n>\s*$/m);
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    await term.waitFor(/^hello\n>\s*\nerror: terminated\n/m);
    expect(await term.lastExit()).toBe(143);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers.js';
import { ROUTER as router, terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// What is typed and pasted at chat -i's prompt, on a real terminal (tmux): a paste of many lines is one
// message, sent by the Enter typed after it, not by its first newline.
let t: TestEnv;
const terminal = terminalsOnEmulator((started) => (t = started));

const sent = () => t.requests().filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.messages.at(-1).content as string);
const history = () => {
  const file = join(t.env.ROUTER_STATE_DIR!, 'repl-history');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

describe.skipIf(!HAS_TMUX)('pasting into chat -i', () => {
  it('200 lines pasted are one message, sent by the Enter after them; the history keeps none of them', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`${router} chat -i --model local/echo --raw`);
    await term.waitFor(/^>\s*$/m);
    const block = Array.from({ length: 200 }, (_, i) => `    pasted_${i + 1} = ${i + 1}  # a line \\`);
    term.paste(`${block.join('\n')}\n`);
    await term.waitFor(/^ {4}pasted_200 = 200 {2}# a line \\$/m);
    // Nothing is sent at the paste's newlines: the message waits for Enter.
    expect(sent()).toEqual([]);
    term.keys('Enter');
    await term.waitFor(/^>\s*$/m);
    // As pasted: every line, each ending in its backslash (a paste's lines are not joined as typed ones are).
    expect(sent()).toEqual([block.join('\n')]);
    // Text pasted after a line typed in part, then Enter: one message again, and the prompt is back.
    term.type('look at ');
    term.paste('this\nand that');
    await term.waitFor(/^and that$/m);
    term.keys('Enter');
    await term.waitFor(/^and that\n(.*\n)*>\s*$/m);
    expect(sent().at(-1)).toBe('look at this\nand that');
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    expect(history()).not.toContain('pasted_');
    expect(history()).not.toContain('and that');
    expect(history()).toContain('"/exit"');
  });

  it('keys that come in one read with a line\'s end in a terminal without bracketed paste are not lost', async () => {
    const term = await terminal();
    t.clearRequests();
    // Where bracketed paste is on, lines typed ahead in one read run one by one (the test below).
    term.run(`TERM=dumb ${router} chat -i --model local/echo --raw`);
    await term.waitFor(/^>\s*$/m);
    // One read: a line ending in \ and the lines that follow it, then Enter.
    term.type('# Title\\\r```js\\\rconst x = 1;\\\r```\r');
    await term.waitFor(/^```\n>\s*$/m);
    expect(sent()).toEqual(['# Title\n```js\nconst x = 1;\n```']);
    // A blank line among them (two paragraphs pasted where there is no bracketed paste) ends nothing.
    // Was: the first paragraph sent alone at the blank line, the second lost.
    term.type('para one\r\rpara two\r');
    await term.waitFor(/^para two\n>\s*$/m);
    expect(sent().at(-1)).toBe('para one\n\npara two');
    // A slash command is one line: a message of more that starts with a slash (a path) is sent as one.
    term.run('/tmp is full\\');
    term.run('why?');
    await term.waitFor(/^why\?\n>\s*$/m);
    expect(sent().at(-1)).toBe('/tmp is full\nwhy?');
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('keys of chat -i', () => {
  it('Ctrl-J and Alt-Enter start a new line of the message; Enter sends it; the start-up line says so', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`${router} chat -i --model local/echo --raw`);
    await term.waitFor(/Alt-Enter or Ctrl-J: a new line[^\n]*\n>\s*$/m);
    // Each key once the REPL has shown the text before it: text and Ctrl-J in one read are a line written at
    // once, ended by its LF (below), which a loaded machine made of keys sent 10 ms apart.
    term.type('first line');
    await term.waitFor(/^> first line$/m);
    term.keys('C-j');
    await term.waitFor(/^\. $/m);
    term.type('second');
    await term.waitFor(/^\. second$/m);
    term.keys('M-Enter');
    await term.waitFor(/^\. second\n\. $/m);
    term.run('third');
    await term.waitFor(/^third\n>\s*$/m);
    expect(sent()).toEqual(['first line\nsecond\nthird']);
    // An LF that ends a line written at once (as expect sends "hi\n") is that line's end, not Ctrl-J.
    term.type('sent by its LF\n');
    await term.waitFor(/^sent by its LF\n>\s*$/m);
    expect(sent().at(-1)).toBe('sent by its LF');
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('slash commands sent at once run one by one, and a message typed after them is sent alone', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`${router} chat -i --model local/echo --raw`);
    await term.waitFor(/^>\s*$/m);
    // One read, as tmux send-keys or an expect script sends it; bracketed paste is on, so this was typed, not pasted.
    term.type('/system be brief\r/model local/echo\rhello\rwho');
    await term.waitFor(/^> who$/m);
    const s = await term.screen();
    expect(s).toMatch(/^> \/system be brief\nsystem message set\n> \/model local\/echo\nmodel: local\/echo\n> hello\n/m);
    expect(sent()).toEqual(['hello']);
    expect(t.requests().at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'be brief' });
    term.keys('Enter');
    await term.waitFor(/^who\n>\s*$/m);
    expect(sent()).toEqual(['hello', 'who']);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('without bracketed paste (TERM=dumb), lines that come in one read are taken for a paste: one message', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`TERM=dumb ${router} chat -i --model local/echo --raw`);
    await term.waitFor(/^>\s*$/m);
    term.type('pasted one\rpasted two\r');
    await term.waitFor(/^pasted one\npasted two\n(.*\n)*>\s*$/m);
    expect(sent()).toEqual(['pasted one\npasted two']);
    // readline's minimal mode ends a line at Alt-Enter itself: the message still goes on, once.
    // Each key once the REPL has shown the text before it: "two" and Ctrl-J in one read (a REPL descheduled
    // past the 10 ms between tmux's two writes) are a line written at once, sent by its LF (the CI's hang).
    term.type('one');
    await term.waitFor(/^> one$/m);
    term.keys('M-Enter');
    await term.waitFor(/^\. $/m);
    term.type('two');
    await term.waitFor(/^\. two$/m);
    term.keys('C-j');
    await term.waitFor(/^\. two\n\. $/m);
    term.run('three');
    await term.waitFor(/^three\n(.*\n)*>\s*$/m);
    expect(sent()).toEqual(['pasted one\npasted two', 'one\ntwo\nthree']);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('history in chat -i where TERM=dumb', () => {
  it('up and down recall the lines typed before, drawn again with a carriage return alone; Backspace deletes', async () => {
    const term = await terminal();
    t.clearRequests();
    term.run(`TERM=dumb ${router} chat -i --model local/echo --raw`);
    await term.waitFor(/^>\s*$/m);
    // Was: Backspace's DEL typed into the line ("first questionx\x7f" sent).
    term.type('first questionx');
    term.keys('BSpace');
    term.keys('Enter');
    await term.waitFor(/^first question\n>\s*$/m);
    term.run('second one');
    await term.waitFor(/^second one\n>\s*$/m);
    // Was: no history (readline's minimal mode): Up did nothing, and Enter sent nothing.
    term.keys('Up');
    term.keys('Up');
    term.keys('Down');
    term.keys('Up');
    term.keys('Enter');
    await term.waitFor(/^first question\n>\s*$/m);
    expect(sent()).toEqual(['first question', 'second one', 'first question']);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('reasoning in chat -i', () => {
  it('--show-reasoning shows each turn\'s reasoning (dimmed, on stderr) before its answer', async () => {
    const term = await terminal();
    term.run(`${router} chat -i --model local/thinker --show-reasoning`);
    await term.waitFor(/^>\s*$/m);
    term.run('why is the sky blue');
    await term.waitFor(/^The question is about "why is the sky blue"\. .*\nHaving thought it over: why is the sky blue\n>\s*$/m);
    expect(await term.screen(true)).toMatch(/\x1b\[2mThe question is about/);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
  });
});

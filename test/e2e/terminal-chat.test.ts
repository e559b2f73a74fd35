/** `router chat` on a real terminal (tmux): an error cutting streamed text, and the -i REPL's keys, /attach, --approve, -c. */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { emulatorWithTerminal, reopened, ROUTER as router } from '../support/terminal-file.js';

// Keys pressed on a real terminal (tmux), not signals sent to the process.
let t: TestEnv;
let term: Terminal;
const fresh = () => (term = reopened(term, t));

emulatorWithTerminal({ batchDelayMs: 300 }, (started) => (t = started), () => term);

describe.skipIf(!HAS_TMUX)('errors on a terminal', () => {
  it('an error that cuts streamed text starts on its own line', async () => {
    fresh();
    await t.admin('faults', { faults: ['cut,after=3,times=1,path=/v1/chat/completions'] });
    term.run(`${router} chat --model local/lorem "write 40 words"`);
    const screen = await term.waitFor(/^error: /m);
    expect(screen).toMatch(/\S\n(\r)?error: /);
    expect(await term.lastExit()).toBe(8);
  });
});

describe.skipIf(!HAS_TMUX)('router chat -i on a terminal', () => {
  it('Ctrl-C stops a pending answer and returns to the prompt; keys typed meanwhile never reach the shell', async () => {
    fresh();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    // Held a minute: the keys below come while the answer is pending, however slow the machine.
    await t.admin('faults', { faults: ['slow,delay_ms=60000,times=1,path=/v1/chat/completions'] });
    t.clearRequests();
    term.run('wait for me');
    expect(await until(() => t.requests().some((r) => r.path === '/v1/chat/completions'))).toBe(true);
    term.type('echo LEAK');
    term.keys('Enter');
    term.keys('C-c');
    await term.waitFor(/answer stopped/);
    await term.waitFor(/^>\s*$/m);
    term.run('second question');
    // The answer, then a fresh prompt: keys pressed while an answer streams are dropped on purpose.
    await term.waitFor(/^second question\n>\s*$/m);
    term.keys('C-d');
    expect(await term.lastExit()).toBe(0);
    const screen = await term.screen();
    expect(screen).not.toMatch(/^LEAK$/m);
    expect(screen).not.toMatch(/command not found/);
  });

  it('Ctrl-C clears a line with text; on an empty line it exits 130', async () => {
    fresh();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.type('half typed');
    term.keys('C-c');
    term.run('fresh line');
    await term.waitFor(/^fresh line\n>\s*$/m);
    expect(await term.screen()).not.toMatch(/^half typed/m);
    term.keys('C-c');
    expect(await term.lastExit()).toBe(130);
  });

  it('a failure inside the REPL is one line and the conversation goes on', async () => {
    fresh();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run(`/save ${join(t.dir, 'no-such-folder', 'x.json')}`);
    await term.waitFor(/error: \/save: cannot write .*no-such-folder.*does not exist/);
    // A 402 and a dropped connection (not retried: the call may have been carried out): one line each, and the conversation goes on.
    await t.admin('faults', { faults: ['402,times=1,path=/v1/chat/completions', 'reset,times=1,path=/v1/chat/completions'] });
    term.run('this one is refused');
    await term.waitFor(/^error: POST \/api\/v1\/chat\/completions: 402 Payment Required: Injected fault: HTTP 402/m);
    term.run('this one is cut');
    await term.waitFor(/^error: .*(socket|connection|closed|reset)/im);
    term.run('still here');
    await term.waitFor(/^still here\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    expect(await term.screen()).not.toMatch(/^\s+at /m);
  });

  it('/attach adds a file to the next message only; a missing one is one line and the conversation goes on', async () => {
    const png = join(t.dir, 'repl.png');
    writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
    fresh();
    t.clearRequests();
    term.run(`${router} chat -i --model local/vision`);
    await term.waitFor(/^>\s*$/m);
    term.run(`/attach ${join(t.dir, 'nope.png')}`);
    await term.waitFor(/error: \/attach \S*nope\.png: cannot read it/);
    term.run(`/attach ${png}`);
    await term.waitFor(/attached .*repl\.png \(image\/png, 75 bytes\)/);
    term.run('what is it?');
    await term.waitFor(/2x3 pixels\n>\s*$/m);
    term.run('and now?');
    // The history still holds the picture (sent with the first message).
    await term.waitFor(/and now\?\nI received 1 attachment:\n\n?1\. image: image\/png, 75 bytes, 2x3 pixels\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    // /attach reads the model list (to say at once what the model cannot take): the chats are the POSTs.
    const sent = t.requests().filter((q) => q.method === 'POST').map((q) => q.body.messages);
    expect(sent[0].at(-1).content[1].image_url.url).toMatch(/^data:image\/png;base64,/);
    expect(typeof sent[1].at(-1).content).toBe('string');
  });

  it('an attachment the model refuses is dropped with its message, so the next one goes; /clear drops a pending one', async () => {
    const png = join(t.dir, 'refused.png');
    writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
    fresh();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run(`/attach ${png}`);
    // Said at /attach, by the model list, before a message is typed for it.
    await term.waitFor(/attached .*refused\.png.*\nnote: local\/echo takes text: the pending attachment refused\.png \(image\) would be refused; \/clear drops it, or \/model one that takes it\n>\s*$/m);
    term.run('what is it?');
    await term.waitFor(/^error: .*local\/echo does not take image input.*\nits attachment was dropped \(\/model one that takes it, then \/attach again\)\n>\s*$/m);
    term.run('again');
    await term.waitFor(/^again\n>\s*$/m);
    term.run(`/attach ${png}`);
    await term.waitFor(/attached .*refused\.png.*\nnote: .*\n>\s*$/m);
    term.run('/clear');
    await term.waitFor(/^conversation cleared, the attachment too\n>\s*$/m);
    term.run('plain');
    await term.waitFor(/^plain\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('/attach - is refused in one line (stdin is the terminal) and the conversation goes on', async () => {
    fresh();
    term.run(`${router} chat -i --model local/echo`);
    await term.waitFor(/^>\s*$/m);
    term.run('/attach -');
    await term.waitFor(/^error: \/attach -: stdin is this terminal; attach a file \(\/attach PATH\)\n>\s*$/m);
    term.run('still here');
    await term.waitFor(/^still here\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
  });

  it('--approve asks before each tool command; a refusal goes back to the model as the result; calls are traced', async () => {
    const tools = join(t.dir, 'approve-tools.json');
    const ran = join(t.dir, 'approve-ran');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: `touch ${ran}; echo sunny` }]));
    fresh();
    term.run(`${router} chat --model local/tools --tools ${tools} --approve "weather in Rome"`);
    await term.waitFor(/Run get_weather \{"city":"weather in Rome"\}\?/);
    term.keys('n', 'Enter');
    await term.waitFor(/tool get_weather \{"city":"weather in Rome"\} -> declined\n(.|\n)*get_weather answered: the user declined to run this tool/);
    expect(await term.lastExit()).toBe(0);
    expect(existsSync(ran)).toBe(false);
  });

  it('-i -c starts from the last conversation and keeps adding to it', async () => {
    const state = join(t.dir, 'repl-state');
    const first = await t.run(['chat', '--model', 'local/echo', 'remember the code 4711'], { env: { ROUTER_STATE_DIR: state } });
    expect(first.code).toBe(0);
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_STATE_DIR: state });
    t.clearRequests();
    term.run(`${router} chat -i -c`);
    await term.waitFor(/continuing c_\w+ \(1 turn\)/);
    await term.waitFor(/^>\s*$/m);
    term.run('and now?');
    await term.waitFor(/^and now\?\n>\s*$/m);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    expect(t.requests().at(-1)!.body.messages.map((m: any) => m.content)).toEqual(['remember the code 4711', 'remember the code 4711', 'and now?']);
    const shown = await t.run(['conversations', 'list', '--json', 'turns'], { env: { ROUTER_STATE_DIR: state } });
    expect(JSON.parse(shown.stdout)).toEqual([{ turns: 2 }]);
  });
});
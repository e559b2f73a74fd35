import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// Keys pressed on a real terminal (tmux), not signals sent to the process.
let t: TestEnv;
let term: Terminal;
const fresh = () => {
  term?.close();
  term = new Terminal({ ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey });
};
const router = `node ${BIN}`;

/**
 * Runs `fn` with the emulator's batch items held back (each waits 10 min): a batch that must still run when Ctrl-C comes
 * does, however long a loaded machine takes to start the watch (40 items of 300 ms can be done before it). The items
 * held stay so; later batches go at the usual pace.
 */
async function held<T>(fn: () => Promise<T>): Promise<T> {
  await t.admin('batches', { delay_ms: 600_000 });
  try {
    return await fn();
  } finally {
    await t.admin('batches', { delay_ms: 300 });
  }
}

beforeAll(async () => {
  t = await startTestEnv({ batchDelayMs: 300 });
});
afterAll(async () => {
  await term?.close();
  await t.close();
});

const lines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { model: 'local/echo', messages: [{ role: 'user', content: `m${i}` }] } })).join('\n');

/** Starts `batch create FILE --watch` (after `prefix`, such as env) on the terminal; the batch's id once its watch shows it. */
async function watchStarted(file: string, prefix = ''): Promise<string> {
  term.run(`${prefix}${router} batch create ${file} --watch --interval 0.1`);
  const id = /created (batch_\w+)/.exec(await term.waitFor(/created (batch_\w+)/))![1]!;
  await term.waitFor(new RegExp(`${id} (validating|in_progress)`));
  return id;
}

describe.skipIf(!HAS_TMUX)('Ctrl-C on a terminal', () => {
  it('stops batch get --watch at once, prints the id and the exact resume command, exit 130', () => held(async () => {
    const file = join(t.dir, 'slow.jsonl');
    writeFileSync(file, lines(40));
    const created = await t.run(['batch', 'create', file]);
    const id = created.stdout.trim();
    const out = join(t.dir, 'watch-out.jsonl');
    fresh();
    term.run(`${router} batch get ${id} --watch --interval 0.1 --results ${out}`);
    await term.waitFor(new RegExp(`${id} (validating|in_progress)`));
    term.keys('C-c');
    // No bound on the time it takes, which a loaded machine passes: a watch that Ctrl-C does not stop never prints this at all.
    const screen = await term.waitFor(/Resume with: .*\n?.*--results/);
    expect(screen).toContain(`Resume with: router batch get ${id} --watch --interval 0.1 --results ${out}`);
    expect(await term.lastExit()).toBe(130);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(t.dir).filter((n) => n.startsWith('.router-tmp-'))).toEqual([]);
  }));

  it('stops batch create --watch the same way; the new id was printed first', () => held(async () => {
    const file = join(t.dir, 'slow2.jsonl');
    writeFileSync(file, lines(40));
    fresh();
    const id = await watchStarted(file);
    term.keys('C-c');
    await term.waitFor(new RegExp(`Resume with: router batch get ${id} --watch --interval 0.1`));
    expect(await term.lastExit()).toBe(130);
  }));
});

describe.skipIf(!HAS_TMUX)('Ctrl-Z on a terminal', () => {
  it('stops the watch\'s spinner, so the shell has its cursor back; fg spins it again', () => held(async () => {
    const file = join(t.dir, 'stopped.jsonl');
    writeFileSync(file, lines(3));
    fresh();
    const id = await watchStarted(file);
    expect(await term.cursorVisible()).toBe(false);
    term.keys('C-z');
    await term.waitFor(/Stopped.*\n\$\s*$/);
    expect(await term.cursorVisible()).toBe(true);
    term.run('fg');
    await term.waitFor(new RegExp(`\\$ fg\\n.*\\n.*${id} (validating|in_progress)`));
    expect(await term.cursorVisible()).toBe(false);
    term.keys('C-c');
    await term.waitFor(/Resume with: /);
    expect(await term.lastExit()).toBe(130);
    expect(await term.cursorVisible()).toBe(true);
  }));
});

describe.skipIf(!HAS_TMUX)('NO_COLOR on a terminal', () => {
  it('the watch\'s spinner is drawn without color', () => held(async () => {
    const file = join(t.dir, 'uncolored.jsonl');
    writeFileSync(file, lines(3));
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey, NO_COLOR: '1' });
    // Without CI in the environment, where chalk (ora's) would paint nothing anyway.
    await watchStarted(file, 'env -u CI -u FORCE_COLOR ');
    expect(await term.screen(true)).not.toMatch(/\x1b\[3\dm/);
    term.keys('C-c');
    expect(await term.lastExit()).toBe(130);
  }));
});

describe.skipIf(!HAS_TMUX)('Ctrl-C while a create waits for its answer', () => {
  it('says the batch may exist and how to check (exit 130): the upload was sent', async () => {
    const file = join(t.dir, 'waiting.jsonl');
    writeFileSync(file, lines(3));
    // Held a minute, not seconds that a loaded machine can spend before the key arrives (the create would then be done).
    await t.admin('faults', { faults: ['slow,delay_ms=60000,times=1,path=/v1/batches,method=POST'] });
    // The emulator's own requests: its log has one once the head is read, before the body is.
    const creates: IncomingMessage[] = [];
    const seen = (req: IncomingMessage) => req.method === 'POST' && req.url === '/api/v1/batches' && creates.push(req);
    t.emu.server.on('request', seen);
    fresh();
    term.run(`${router} batch create ${file}`);
    // The upload is sent, to its end (read by the server's parser; the route, held by the fault, reads it later): the key
    // comes while the create waits for its answer, not after a time that may end with the body still on its way.
    try {
      expect(await until(() => creates.some((r) => r.complete))).toBe(true);
    } finally {
      t.emu.server.off('request', seen);
    }
    term.keys('C-c');
    const screen = await term.waitFor(/stopped after the upload was sent: the batch may exist\. Check with: router batch list( --created-after \d+)?\n(.*\n)?error: interrupted/);
    expect(screen).not.toMatch(/at .+\.js:\d+/);
    expect(await term.lastExit()).toBe(130);
    await t.admin('faults', { faults: [] });
  });
});

describe.skipIf(!HAS_TMUX)('batch run on a terminal', () => {
  it('one progress line for the whole job; Ctrl-C stops watching (exit 130), the resume command finishes it', async () => {
    const file = join(t.dir, 'job.jsonl');
    writeFileSync(file, lines(30));
    const out = join(t.dir, 'job-out.jsonl');
    fresh();
    term.run(`${router} batch run ${file} --max-requests 10 --watch --interval 0.1 --results ${out}`);
    const progress = await term.waitFor(/job_\w+: shards \d\/3 · requests \d+ completed, 0 failed of 30 · \$[\d.]+ · \d+s/);
    const id = /(job_\w+): shards/.exec(progress)![1]!;
    // The job must still run when the key comes: items not yet started wait 20 s (a loaded machine can take seconds
    // to deliver it; 30 items of 300 ms were all done before it). Back to no wait for the resume, which finishes what
    // was held within those 20 s.
    await t.admin('batches', { delay_ms: 20_000 });
    term.keys('C-c');
    const screen = await term.waitFor(/Resume with: .*\n?.*--results/);
    expect(screen.replace(/\n/g, '')).toContain(`Resume with: router batch run --resume ${id} --watch --interval 0.1 --results ${out}`);
    expect(await term.lastExit()).toBe(130);
    expect(existsSync(out)).toBe(false);
    await t.admin('batches', { delay_ms: 0 });
    const resumed = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.1', '--results', out]);
    expect(resumed.code, resumed.stderr).toBe(0);
  });
});

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

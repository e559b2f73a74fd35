import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers.js';
import { ROUTER as router, terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX, type Terminal } from '../support/tmux.js';
import { holdingUpstream, pricedGateway, sseChunk } from '../support/upstreams.js';

// The edges of the CLI that only a real terminal (tmux) shows: what is drawn, cleared and refused there.
let t: TestEnv;
const terminal = terminalsOnEmulator((started) => (t = started));

/** A tools file with one tool, get_weather, whose command (`cat`) answers with its arguments. */
function weatherTools(prefix: string): string {
  const tools = join(mkdtempSync(join(tmpdir(), prefix)), 'tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: 'cat' }]));
  return tools;
}

/** Ctrl-C while the spinner is drawn: the error line alone, exit 130, no spinner left, the cursor shown. */
async function interruptClearsSpinner(term: Terminal): Promise<void> {
  term.keys('C-c');
  await term.waitFor(/^error: interrupted/m);
  expect(await term.lastExit()).toBe(130);
  expect(await term.screen()).not.toMatch(/waiting for/);
  expect(await term.cursorVisible()).toBe(true);
}

/** A gateway whose model `test/m` answers a request whose first message is "hold" only when the test says so. */
async function heldGateway() {
  const up = holdingUpstream(() => 2);
  const gw = await pricedGateway(up.handler, 0.000001);
  const env = { ROUTER_API_ROOT: gw.gateway.apiRoot, ROUTER_API_KEY: gw.gateway.store.firstKeys().apiKey };
  /** Streams `text` as the answer to the request held next. */
  const answer = (text: string) => {
    const res = up.held.shift()!;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk(null)}${sseChunk(text)}${sseChunk(null, 'stop')}data: [DONE]\n\n`);
  };
  return { gw, up, env, answer };
}

/**
 * Starts `command` (chat -i with weatherTools) and sends "hold": once its spinner is drawn, the held round is
 * answered with a call of get_weather. Gives the arrival of the next round (asked for before the answer).
 */
async function roundCallsWeather(term: Terminal, up: Awaited<ReturnType<typeof heldGateway>>['up'], command: string): Promise<{ next: Promise<unknown> }> {
  term.run(command);
  await term.waitFor(/^>\s*$/m);
  const arrived = up.next();
  term.run('hold');
  await arrived;
  await term.waitFor(/waiting for test\/m/);
  const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
  const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'test/m', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const next = up.next();
  const res = up.held.shift()!;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`${chunk({ role: 'assistant', tool_calls: [call] }, null)}${chunk({}, 'tool_calls')}data: [DONE]\n\n`);
  return { next };
}

/**
 * Runs `fn` with `router chat --model test/m hold` started on a terminal against a held gateway, its request arrived
 * there and its spinner drawn; then checks what every end must leave: no spinner text on the screen, the cursor shown.
 */
async function whileSpinning(fn: (term: Terminal, held: Awaited<ReturnType<typeof heldGateway>>) => Promise<void>): Promise<void> {
  const held = await heldGateway();
  try {
    const term = await terminal(held.env);
    const arrived = held.up.next();
    term.run(`${router} chat --model test/m hold`);
    await arrived;
    await term.waitFor(/waiting for test\/m/);
    await fn(term, held);
    expect(await term.screen()).not.toMatch(/waiting for/);
    expect(await term.cursorVisible()).toBe(true);
  } finally {
    await held.gw.close();
  }
}

describe.skipIf(!HAS_TMUX)('waiting for the first token on a terminal', () => {
  it('chat shows a spinner on stderr until the answer comes, then clears it and shows the cursor', () =>
    whileSpinning(async (term, { answer }) => {
      expect(await term.cursorVisible()).toBe(false);
      answer('the answer came');
      await term.waitFor(/^the answer came$/m);
      expect(await term.lastExit()).toBe(0);
    }));

  it('Ctrl-C while it spins clears it: the error line alone, the cursor shown, exit 130', () =>
    whileSpinning(async (term) => {
      term.keys('C-c');
      await term.waitFor(/^error: interrupted/m);
      expect(await term.lastExit()).toBe(130);
    }));

  it('SIGTERM while it spins ends the run at once, exit 143, the cursor shown (ora\'s exit hook takes no signal)', async () => {
    const { gw, up, env } = await heldGateway();
    try {
      const term = await terminal(env);
      const arrived = up.next();
      term.run(`${router} chat --model test/m hold & echo "pid=$!"; wait $!; echo "exit=$?"`);
      const pid = Number(/pid=(\d+)/.exec(await term.waitFor(/pid=\d+/))![1]);
      await arrived;
      await term.waitFor(/waiting for test\/m/);
      // Was: ignored (the spinner's signal-exit listener made last-resort's handler step aside), the answer awaited.
      process.kill(pid, 'SIGTERM');
      await term.waitFor(/^exit=143$/m);
      expect(await term.screen()).not.toMatch(/waiting for/);
      expect(await term.cursorVisible()).toBe(true);
    } finally {
      await gw.close();
    }
  });

  it('an error while it spins is one line with no spinner left on it', () =>
    whileSpinning(async (term, { up }) => {
      const res = up.held.shift()!;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 400, message: 'upstream refuses' } }));
      await term.waitFor(/^error: .*upstream refuses/m);
      expect(await term.lastExit()).not.toBe(0);
    }));

  it('responses spins as chat does, and Ctrl-C clears it: the cursor shown, exit 130', async () => {
    await t.admin('faults', { faults: ['slow,delay_ms=600000,path=/v1/responses'] });
    try {
      const term = await terminal();
      term.run(`${router} responses --model local/echo hold`);
      await term.waitFor(/waiting for local\/echo/);
      expect(await term.cursorVisible()).toBe(false);
      await interruptClearsSpinner(term);
    } finally {
      await t.admin('faults', { faults: [] });
    }
  });

  it('a retry\'s note clears the spinner and it is drawn again below it while the wait goes on', async () => {
    // The first request fails (503: retried), the retry waits.
    await t.admin('faults', { faults: ['503,times=1,path=/v1/chat/completions', 'slow,delay_ms=600000,path=/v1/chat/completions'] });
    try {
      const term = await terminal();
      term.run(`${router} chat --model local/echo hold`);
      // Was: the retry line, and below it nothing while the retry waited.
      await term.waitFor(/^retry 1 in [\d.]+s: [^\n]*\n\S* ?waiting for local\/echo/m);
      expect(await term.cursorVisible()).toBe(false);
      await interruptClearsSpinner(term);
    } finally {
      await t.admin('faults', { faults: [] });
    }
  });

  it('chat -i spins while a turn waits, and clears it before the answer and on Ctrl-C', async () => {
    const { gw, up, env, answer } = await heldGateway();
    try {
      const term = await terminal(env);
      term.run(`${router} chat -i --model test/m`);
      await term.waitFor(/^>\s*$/m);
      let arrived = up.next();
      term.run('hold');
      await arrived;
      await term.waitFor(/waiting for test\/m/);
      answer('first answer');
      await term.waitFor(/^first answer\n>\s*$/m);
      expect(await term.screen()).not.toMatch(/waiting for/);
      expect(await term.cursorVisible()).toBe(true);
      arrived = up.next();
      term.run('hold');
      await arrived;
      await term.waitFor(/waiting for test\/m/);
      term.keys('C-c');
      await term.waitFor(/^\(answer stopped\)\n>\s*$/m);
      expect(await term.screen()).not.toMatch(/waiting for/);
      expect(await term.cursorVisible()).toBe(true);
      term.keys('C-d');
      expect(await term.lastExit()).toBe(0);
    } finally {
      await gw.close();
    }
  });
});

describe.skipIf(!HAS_TMUX)('the spinner in every round of a tool loop', () => {
  it('chat -i --tools spins while each round waits on the service, not only the first', async () => {
    const tools = weatherTools('router-rounds-');
    const { gw, up, env, answer } = await heldGateway();
    try {
      const term = await terminal(env);
      const { next } = await roundCallsWeather(term, up, `${router} chat -i --model test/m --tools ${tools}`);
      // The second round, the tool's result sent: was no spinner at all while it waited.
      await next;
      await term.waitFor(/get_weather[^\n]*\n[^\n]*waiting for test\/m/);
      expect(await term.cursorVisible()).toBe(false);
      answer('sunny in Paris');
      await term.waitFor(/^sunny in Paris\n>\s*$/m);
      expect(await term.screen()).not.toMatch(/waiting for/);
      expect(await term.cursorVisible()).toBe(true);
      term.keys('C-d');
      expect(await term.lastExit()).toBe(0);
    } finally {
      await gw.close();
    }
  });
});

describe.skipIf(!HAS_TMUX)('the spinner and a question', () => {
  it('chat -i --approve: the question to run a tool takes the spinner\'s place, answered as asked', async () => {
    const tools = weatherTools('router-approve-');
    const { gw, up, env, answer } = await heldGateway();
    try {
      const term = await terminal(env);
      const { next } = await roundCallsWeather(term, up, `${router} chat -i --model test/m --tools ${tools} --approve`);
      await term.waitFor(/Run get_weather \{"city":"Paris"\}\? \(Y\/n\)/);
      // A spinner still running hides the cursor (and draws itself over the question between its writes).
      expect(await term.cursorVisible()).toBe(true);
      expect(await term.screen()).not.toMatch(/waiting for/);
      term.keys('Enter');
      await next;
      answer('sunny in Paris');
      await term.waitFor(/^sunny in Paris\n>\s*$/m);
      term.keys('C-d');
      expect(await term.lastExit()).toBe(0);
    } finally {
      await gw.close();
    }
  });
});

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

/** The wait spinner on a real terminal (tmux): drawn and cleared for chat, responses and chat -i, on Ctrl-C, SIGTERM, errors, retries, each tool round and an --approve question. */
import { mkdtempSync, writeFileSync } from 'node:fs';
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

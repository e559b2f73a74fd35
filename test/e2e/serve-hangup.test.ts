import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, serveApi, type Serve } from '../support/serve-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';

// `router serve --providers` stopped while it relays a stream:
// - SIGHUP (the terminal closing) exited 129 at once, the caller's stream cut bare: now the same clean
//   close as SIGTERM's (the stream ends with the error chunk and [DONE], the state let go), then 129;
// - SIGTERM while a replayed stream waits for its next recorded chunk: the error chunk and [DONE], as a
//   live stream's, in the binary as in process.
const dir = tempFolder('router-serve-hangup-');
const HOUR = 3_600_000;
let up: LocalUpstream;
let providers: string;

beforeAll(async () => {
  // "hold": a role chunk and a token, then nothing more (the connection kept open); else a whole stream.
  up = await localUpstream((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (String((body.messages as { content: string }[])[0]!.content) === 'hold') return void res.write(`${sseChunk(null)}${sseChunk('Hello')}`);
    res.end(`${sseChunk('Hello')}${sseChunk(' world', 'stop')}data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\ndata: [DONE]\n\n`);
  });
  providers = join(dir(), 'gateway.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m } }\n`);
});

afterAll(async () => {
  await up?.close();
});

/** Asks a stream, reads it until its first token, signals the serve, and reads the rest: the stream's events, and the exit code. */
async function stopMidStream(serve: Serve, content: string, signal: NodeJS.Signals): Promise<{ events: string[]; code: number | null; stderr: string }> {
  let stderr = '';
  serve.child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exit = once(serve.child, 'close');
  const res = await fetch(`${serve.info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${serve.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content }] }) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
  serve.child.kill(signal);
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
  } catch {
    // cut bare (the old SIGHUP): the events so far say it
  }
  const [code] = (await exit) as [number | null];
  return { events: text.split('\n\n').filter((e) => e.startsWith('data: ')), code, stderr };
}

function endsWithStopChunk(events: string[]): void {
  expect(events.at(-1)).toBe('data: [DONE]');
  const last = JSON.parse(events.at(-2)!.slice(6));
  expect(last.error.message).toBe('Provider returned an error mid-stream: up: the gateway is stopping');
  expect(last.choices[0].finish_reason).toBe('error');
}

describe('router serve --providers hung up (SIGHUP) mid-stream', () => {
  it('closes as SIGTERM does: the stream ends with the error chunk and [DONE], the state is let go, exit 129', async () => {
    const state = join(dir(), 'state-hup');
    const serve = await spawnServe(['--state', state, '--providers', providers]);
    const { events, code, stderr } = await stopMidStream(serve, 'hold', 'SIGHUP');
    // Before: exit 129 at once, the stream cut after "Hello" with no error chunk.
    endsWithStopChunk(events);
    expect(code).toBe(129);
    expect(stderr).not.toContain('error:');
    // The state folder is free for the next serve.
    const again = await spawnServe(['--state', state]);
    expect((await serveApi(again, '/v1/models')).status).toBe(200);
    const gone = once(again.child, 'exit');
    again.child.kill('SIGTERM');
    expect((await gone)[0]).toBe(0);
  });
});

describe('router serve --replay stopped (SIGTERM) while a replayed stream waits', () => {
  it('ends the stream with the error chunk and [DONE], as a live one, exit 0', async () => {
    const cassettes = join(dir(), 'cassettes');
    const recorder = await spawnServe(['--state', join(dir(), 'state-rec'), '--providers', providers, '--record', cassettes]);
    const res = await fetch(`${recorder.info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${recorder.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'a stream' }] }) });
    expect(await res.text()).toContain('[DONE]');
    const stopped = once(recorder.child, 'close');
    recorder.child.kill('SIGTERM');
    expect((await stopped)[0]).toBe(0);
    // Edited as a person would: every chunk after the first an hour later.
    const [file] = readdirSync(cassettes);
    const c = JSON.parse(readFileSync(join(cassettes, file!), 'utf8')) as Cassette;
    c.response.chunks!.forEach((chunk, i) => (chunk.after_ms = i ? HOUR : 0));
    writeFileSync(join(cassettes, file!), JSON.stringify(c, null, 2));
    const player = await spawnServe(['--state', join(dir(), 'state-play'), '--providers', providers, '--replay', cassettes]);
    const { events, code } = await stopMidStream(player, 'a stream', 'SIGTERM');
    endsWithStopChunk(events);
    expect(events.join('\n')).not.toContain('world');
    expect(code).toBe(0);
  });
});

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';

// --timeout is the wait for the next piece of an answer: a stream that sends only keep-alive comments
// (`: PROCESSING`, as the service does while a model thinks) sends none, and times out (exit 8).
let server: Server | undefined;
const open = new Set<ServerResponse>();
afterEach(async () => {
  for (const res of open) res.destroy();
  open.clear();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server that answers every request with an event stream of `first` events, then only comments, every 20 ms, never ending. */
async function commentsOnly(first: string[] = []): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      open.add(res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const ev of first) res.write(`data: ${ev}\n\n`);
      const beat = setInterval(() => res.write(': PROCESSING\n\n'), 20);
      res.on('close', () => clearInterval(beat));
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

const env = (apiRoot: string) => ({ ROUTER_API_ROOT: apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1' });
const chunk = (text: string) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });

describe('a stream of keep-alive comments only', () => {
  it('chat: times out after --timeout, exit 8, naming the wait', async () => {
    const r = await runInProcess(['--timeout', '300ms', '--max-retries', '0', 'chat', '--model', 'x/y', 'hi'], { env: env(await commentsOnly()) });
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/^error: timed out waiting for 127\.0\.0\.1:\d+: no event of the stream \(keep-alive comments are none\) \(--timeout 300ms\)\n$/);
  });

  it('chat: after some text, the text so far, then the same timeout', async () => {
    const r = await runInProcess(['--timeout', '300ms', '--max-retries', '0', 'chat', '--model', 'x/y', 'hi'], { env: env(await commentsOnly([chunk('Hello')])) });
    expect(r.code).toBe(8);
    expect(r.stdout).toBe('Hello');
    expect(r.stderr).toMatch(/timed out waiting for .*--timeout 300ms/);
  });

  it('responses: the same', async () => {
    const r = await runInProcess(['--timeout', '300ms', '--max-retries', '0', 'responses', '--model', 'x/y', 'hi'], { env: env(await commentsOnly()) });
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/timed out waiting for .*--timeout 300ms/);
  });

  it('--help says what a wait is', async () => {
    const r = await runInProcess(['--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/keep-alive comments do not count/);
  });
});

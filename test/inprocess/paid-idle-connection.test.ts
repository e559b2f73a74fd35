import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { Agent } from 'undici';
import { RouterClient, type RetryInfo } from '../../src/client/index.js';

// Paid calls are never retried once they may have been carried out (the `paid` policy). A server that
// closed the kept-alive connection while it was idle (a keep-alive timeout shorter than the client's,
// here with a hint of "timeout=0" that undici takes for none) is no such case: the request was never
// written. undici sees the close of an idle connection and sends the next request on a new one, so the
// next paid call neither fails nor counts as a retry, whatever the calls before it were. Were that lost,
// the call would fail with "not retried", where the old `always` policy hid it by a retry. (A close
// that crosses a request on the wire cannot be told from an answer lost: it fails, not retried.)
let dir: string;
let emu: Emulator;
let client: RouterClient;
let agent: Agent;
let disconnects = 0;
let connections = 0;
let allDropped: () => void = () => {};
const retries: RetryInfo[] = [];
const posts = (path: string) => emu.requestLog.filter((r) => r.method === 'POST' && r.path === path).length;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-paid-idle-'));
  emu = await startEmulator({ stateDir: dir, port: 0 });
  // No Keep-Alive hint (a Node server's would make undici keep nothing under 3 s), and a close of any
  // connection idle for 1 s: a proxy's idle timeout.
  emu.server.keepAliveTimeout = 0;
  emu.server.timeout = 1000;
  emu.server.on('connection', () => connections++);
  // The client's own keep-alive (10 s), and a way to see it drop a connection the server closed.
  agent = new Agent({ keepAliveTimeout: 10_000 });
  agent.on('disconnect', () => ++disconnects === connections && allDropped());
  client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot, dispatcher: agent, onRetry: (i) => retries.push(i) });
});

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = { model: 'local/lorem', max_tokens: 5, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('a paid call on a connection the server closed while it was idle', () => {
  it.each(['whole', 'streamed', 'embeddings'] as const)('%s: sent again on a new connection, once, no failure', async (kind) => {
    const path = kind === 'embeddings' ? '/v1/embeddings' : '/v1/chat/completions';
    const call = async () => {
      if (kind === 'embeddings') return void (await client.embeddings.create({ model: 'local/embed', input: 'hi' }));
      if (kind === 'whole') return void (await client.chat.create(ask));
      for await (const _ of await client.chat.stream(ask));
    };
    for (let round = 0; round < 2; round++) {
      const dropped = new Promise<void>((r) => (allDropped = r));
      const before = { posts: posts(path), disconnects, connections };
      await call();
      await call();
      // Connections are kept and used again (undici opens a second when the first is not free yet).
      expect(connections - before.connections).toBeLessThan(3);
      // The server closes the idle connections; the client sees it, then sends the next call.
      await dropped;
      expect(disconnects).toBe(connections);
      await call();
      expect(posts(path)).toBe(before.posts + 3);
    }
    expect(retries).toEqual([]);
  });
});

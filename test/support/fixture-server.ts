import { afterEach } from 'vitest';
import { runInProcess, type InProcessResult } from './inprocess.js';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One canned answer: a JSON body, or (with `events`) an event stream of JSON events and its terminator. */
export interface Fixture {
  status?: number;
  contentType?: string;
  body?: unknown;
  events?: unknown[];
  /** The last `data:` line of a stream (`[DONE]` for chat); none when left out. */
  terminator?: string;
  /** More response headers (a redirect's `location`). */
  headers?: Record<string, string>;
}

export interface SeenRequest {
  method: string;
  /** The path with its query, as sent. */
  url: string;
  authorization: string | undefined;
  body: string;
}

export interface FixtureServer {
  apiRoot: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A server on 127.0.0.1 answering `METHOD /api/path` (the path without its query, or with it when
 * a key names it) with its fixture, and 404 `{error}` for anything else: the answers the official
 * schemas allow, served to the real client over HTTP. A function fixture sees the request.
 */
export async function startFixtureServer(routes: Record<string, Fixture | ((req: SeenRequest) => Fixture)>): Promise<FixtureServer> {
  const requests: SeenRequest[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', authorization: req.headers.authorization, body };
    requests.push(seen);
    const path = seen.url.split('?')[0];
    const found = routes[`${seen.method} ${seen.url}`] ?? routes[`${seen.method} ${path}`];
    const fixture = typeof found === 'function' ? found(seen) : found;
    if (!fixture) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: `no fixture for ${seen.method} ${path}` } }));
      return;
    }
    if (fixture.events) {
      res.writeHead(fixture.status ?? 200, { 'content-type': fixture.contentType ?? 'text/event-stream' });
      for (const ev of fixture.events) res.write(`data: ${JSON.stringify(ev)}\n\n`);
      if (fixture.terminator) res.write(`data: ${fixture.terminator}\n\n`);
      res.end();
      return;
    }
    const text = typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body);
    res.writeHead(fixture.status ?? 200, { 'content-type': fixture.contentType ?? 'application/json', ...fixture.headers }).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}/api`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * `against(routes, args)`: runs router in-process (no retries, no profile, no ledger) against a fixture
 * server made for that call; the previous one is closed first, the last after each test.
 */
export function fixtureRuns(): { against: (routes: Record<string, Fixture>, args: string[]) => Promise<InProcessResult>; readonly server: FixtureServer | undefined } {
  let server: FixtureServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return {
    async against(routes, args) {
      await server?.close();
      server = await startFixtureServer(routes);
      const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1' };
      return runInProcess(['--max-retries', '0', ...args], { env });
    },
    get server() {
      return server;
    },
  };
}

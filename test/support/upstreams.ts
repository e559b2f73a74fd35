import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type EmulatorOptions } from '../../src/emulator/server.js';

/** A small local HTTP server standing in for an upstream that misbehaves; `seen` keeps each request's headers. */
export interface LocalUpstream {
  baseUrl: string;
  seen: IncomingMessage['headers'][];
  close(): Promise<void>;
}

/** A plain HTTP server on 127.0.0.1 (a fragment URL's, an upstream's): its root, and a close that ends open connections too. */
export async function webServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ root: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    root: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/**
 * An OpenAI-compatible upstream on 127.0.0.1 answering with `answer`; what a real one refuses it refuses
 * too, saying why, before `answer` sees it: a method but POST (405), a body that is empty, not JSON or not
 * a JSON object (400). Before, it took any method and an empty body as `{}`, so a test could pass on a
 * request the real server would refuse.
 */
export async function localUpstream(answer: (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void): Promise<LocalUpstream> {
  const seen: IncomingMessage['headers'][] = [];
  const web = await webServer((req, res) => {
    seen.push(req.headers);
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return refuse(res, 405, `${req.method} ${req.url}: only POST is served here`, { allow: 'POST' });
      const body = jsonObject(raw);
      if (typeof body === 'string') return refuse(res, 400, `POST ${req.url}: ${body}`);
      answer(req, res, body);
    });
  });
  return { baseUrl: `${web.root}/v1`, seen, close: web.close };
}

/**
 * A stand-in for the service itself (what `router api` and the client ask, any method, its body as sent),
 * not an upstream of the gateway: `baseUrl` is its `…/v1`, as an upstream's.
 */
export async function localService(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalUpstream> {
  const seen: IncomingMessage['headers'][] = [];
  const web = await webServer((req, res) => {
    seen.push(req.headers);
    answer(req, res);
  });
  return { baseUrl: `${web.root}/v1`, seen, close: web.close };
}

/** A request's body as a JSON object, or what is wrong with it. */
function jsonObject(raw: string): Record<string, unknown> | string {
  if (!raw) return 'the body is empty; a JSON object was expected';
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    return `the body is not JSON: ${(err as Error).message}`;
  }
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : 'the body is JSON but not an object';
}

/** A refusal in OpenAI's error shape, also said on stderr: a test that sends it has a request a real server would refuse. */
function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  process.stderr.write(`localUpstream: ${status} ${message}\n`);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
}

/**
 * A port where nothing listens, and nothing will while the test runs: one below 1024 that refuses a connection now.
 * Before: a server's port opened and closed again, which the kernel may hand to the next server another test file
 * opens on port 0 (files run side by side), and that one would then answer for the "dead" provider.
 * Never one of the ports the fetch standard blocks: fetch (an MCP server's URL) says "bad port" there, not refused.
 */
export async function deadPort(): Promise<number> {
  for (let port = 1023 - Math.floor(Math.random() * 100); port > 0; port--) if (!FETCH_BLOCKS.has(port) && (await refuses(port))) return port;
  throw new Error('no port below 1024 refuses connections on 127.0.0.1');
}

/**
 * A port for a child process (Prism, an MCP server) to listen on: free now and outside the kernel's ephemeral
 * range, so no other test file's `listen(0)` is handed it before the child binds it (a port asked of the system
 * and let go could be, and that server then answered the child's readiness probe).
 */
export async function childPort(): Promise<number> {
  const low = ephemeralLow();
  const floor = Math.max(1024, Math.min(low - 4000, 20000));
  for (let tries = 0; tries < 200; tries++) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await refuses(port)) return port;
  }
  throw new Error(`no free port between ${floor} and ${low} on 127.0.0.1`);
}

/** The lowest port the kernel hands out for port 0 (Linux says it; elsewhere IANA's 49152 is safe enough). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 49152;
  }
}

/** The ports below 1024 the fetch standard blocks (https://fetch.spec.whatwg.org/#bad-port). */
const FETCH_BLOCKS = new Set([1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995]);

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

export const sseChunk = (content: string | null, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === null ? { role: 'assistant' } : { role: 'assistant', content }, finish_reason: finish }] })}\n\n`;

/** An upstream's handler answering every request with one whole chat completion "hi" of 2 + 3 tokens. */
export const answersHi = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
};

/** A whole chat answer of `tokens` tokens, half prompt and half completion. */
export function answerTokens(res: ServerResponse, tokens: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: tokens / 2, completion_tokens: tokens / 2, total_tokens: tokens } }));
}

/**
 * An upstream's handler that keeps a request whose first message is "hold" unanswered, in `held`, until
 * the test answers it (`next()` resolves when the next one arrives); any other is answered at once with
 * `tokensFor(its content)` tokens.
 */
export function holdingUpstream(tokensFor: (content: string) => number) {
  const held: ServerResponse[] = [];
  let arrived: (() => void) | undefined;
  const handler = (_req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
    const content = String((body.messages as { content: string }[])[0]!.content);
    if (content !== 'hold') return answerTokens(res, tokensFor(content));
    held.push(res);
    arrived?.();
  };
  return { held, handler, next: () => new Promise<void>((resolve) => (arrived = resolve)) };
}

/** Never answers: the request is read and the connection kept open. */
export const stall = () => localUpstream(() => {});
/** Answers every request with this status. */
export const failing = (status: number) => localUpstream((_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status, message: `upstream says ${status}` } }));
});
/** Starts a stream, sends `tokens` chunks with a token (a role-only chunk first), then drops the connection. */
export const breaking = (tokens: number) => localUpstream((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(sseChunk(null));
  for (let i = 0; i < tokens; i++) res.write(sseChunk(`token${i} `));
  setTimeout(() => res.destroy(), 20);
});

/** A gateway (`router serve --providers`) from a providers file's text, in a temp folder of its own; `get` asks it with its API key. */
export async function testGateway(providers: string, name = 'gateway', options: Partial<EmulatorOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), `router-${name}-`));
  const gateway = await startEmulator({ ...options, stateDir: join(dir, 'state'), port: 0, gateway: { config: parseProviders(providers, {}) } });
  const key = gateway.store.firstKeys().apiKey;
  return {
    gateway,
    get: async <T = any>(path: string) => {
      const res = await fetch(`${gateway.apiRoot}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: (await res.json()) as T };
    },
    close: async () => {
      await gateway.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A gateway whose one model `test/m` is served by a local upstream answering with `answer`, at `price`
 * USD a token both ways; `call` asks it with any key (the raw response), `json` with the body read.
 */
export async function pricedGateway(answer: Parameters<typeof localUpstream>[0], price: number, options: Partial<EmulatorOptions> = {}) {
  const upstream = await localUpstream(answer);
  const gw = await testGateway(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${price}, completion: ${price} } } }\n`, 'priced', options);
  const call = (method: string, path: string, key: string, body?: unknown) =>
    fetch(`${gw.gateway.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return {
    ...gw,
    upstream,
    call,
    json: async (method: string, path: string, key: string, body?: unknown) => {
      const res = await call(method, path, key, body);
      return { status: res.status, body: (await res.json()) as any };
    },
    /** A new key named `name` that may spend `limit` USD, made with the gateway's management key: the key. */
    keyWithLimit: async (name: string, limit: number): Promise<string> => {
      const res = await call('POST', '/v1/keys', gw.gateway.store.firstKeys().managementKey, { name, limit });
      if (res.status !== 201) throw new Error(`POST /v1/keys: HTTP ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { key: string }).key;
    },
    close: async () => {
      await gw.close();
      await upstream.close();
    },
  };
}

/** An answer's text with the gateway's own ids (`gen-…`, `emb-…`, new on every call, replays too) as one: what a replay must repeat byte for byte. */
export const withoutGatewayIds = (text: string): string => text.replace(/\b(gen|emb)-\d+-[0-9a-f]{20}\b/g, '$1-ID');

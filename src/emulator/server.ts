import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Ctx, HttpError, errorBody, requestId, type Access, type Handler, type LoggedRequest } from './http.js';

export type { Access, Handler, RouteTable } from './http.js';
import { FaultBoard, parseFault, FaultSpecError, type FaultRule } from './faults.js';
import { StateStore } from './store.js';
import { handleChat } from './chat.js';
import { adminRoutes } from './admin.js';
import { handleEmbeddings } from './embeddings.js';
import { handleResponses } from './responses.js';
import { BatchEngine } from './batches.js';
import { handleSpeech } from './speech.js';
import { handleDecision } from './decisions.js';
import { accountRoutes } from './account.js';

export interface EmulatorOptions {
  stateDir: string;
  port?: number;
  host?: string;
  /** Server-wide fault rules, as `router serve --fault` gives them. */
  faults?: string[];
  /** How many requests the request log keeps. */
  logLimit?: number;
  /** Pause of the batch engine before each request and state change (default 20 ms). */
  batchDelayMs?: number;
}


interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: Handler;
  access: Access;
}

export interface Emulator {
  server: Server;
  /** Requests received (not the admin ones), oldest first; Authorization is never recorded. */
  requestLog: LoggedRequest[];
  batches: BatchEngine;
  store: StateStore;
  faults: FaultBoard;
  apiRoot: string;
  port: number;
  close(): Promise<void>;
}

function compile(method: string, path: string, handler: Handler, access: Access): Route {
  const names: string[] = [];
  const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_, n: string) => (names.push(n), '([^/]+)'))}$`);
  return { method, pattern, names, handler, access };
}

export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  const store = new StateStore(opts.stateDir);
  const faults = new FaultBoard();
  faults.set((opts.faults ?? []).map(parseFault));
  const log: LoggedRequest[] = [];
  const logLimit = opts.logLimit ?? 1000;

  const batches = new BatchEngine(store, { delayMs: opts.batchDelayMs ?? 20 });
  const routes: Route[] = [
    compile('POST', '/v1/chat/completions', handleChat, 'any'),
    compile('POST', '/v1/responses', handleResponses, 'any'),
    compile('POST', '/v1/embeddings', handleEmbeddings, 'any'),
    compile('POST', '/v1/audio/speech', handleSpeech, 'management'),
    compile('POST', '/alpha/decisions', handleDecision, 'management'),
    compile('POST', '/v1/batches', (ctx) => batches.create(ctx), 'any'),
    compile('GET', '/v1/batches', async (ctx) => batches.list(ctx), 'any'),
    compile('GET', '/v1/batches/:id', (ctx) => batches.get(ctx), 'any'),
  ];
  const table = { ...accountRoutes(), ...adminRoutes(faults, log, batches) };
  for (const [key, { handler, access }] of Object.entries(table)) {
    const [method, path] = key.split(' ') as [string, string];
    routes.push(compile(method, path, handler, access));
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody(500, 'Internal Server Error')));
      } else res.destroy();
      process.stderr.write(`emulator: ${(err as Error)?.stack ?? err}\n`);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith('/api/')) {
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': requestId() });
      res.end(JSON.stringify(errorBody(404, `Not found: ${url.pathname}; the API root is /api`)));
      return;
    }
    const path = url.pathname.slice(4);
    let entry: LoggedRequest | undefined;
    if (!path.startsWith('/_emulator/')) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (k !== 'authorization' && typeof v === 'string') headers[k] = v;
      const query: Record<string, string[]> = {};
      for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
      entry = { method: req.method ?? 'GET', path, query, headers, body: undefined, at: Date.now() };
      log.push(entry);
      if (log.length > logLimit) log.shift();
    }
    let fault: FaultRule | undefined;
    const faultHeader = req.headers['x-router-fault'];
    try {
      fault = path.startsWith('/_emulator/') ? undefined : faults.take(path, typeof faultHeader === 'string' ? faultHeader : undefined);
    } catch (err) {
      if (!(err instanceof FaultSpecError)) throw err;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(errorBody(400, err.message)));
      return;
    }
    const ctx = new Ctx(req, res, store, fault, entry);
    try {
      if (fault?.kind === 'slow') await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault?.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault?.kind === 'status') {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
        throw new HttpError(fault.status!, `Injected fault: HTTP ${fault.status}`, undefined, headers);
      }
      const match = findRoute(req.method ?? 'GET', path);
      if (!match) throw new HttpError(404, `No route for ${req.method} ${path}`);
      authenticate(ctx, match.route.access);
      ctx.params = match.params;
      await match.route.handler(ctx);
    } catch (err) {
      if (err instanceof HttpError) {
        req.resume();
        ctx.error(err.status, err.message, err.errorType, err.headers);
        return;
      }
      throw err;
    }
  }

  function findRoute(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    let pathMatched = false;
    for (const route of routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
      return { route, params };
    }
    if (pathMatched) throw new HttpError(405, `Method ${method} not allowed on ${path}`);
    return undefined;
  }

  function authenticate(ctx: Ctx, access: Access): void {
    const auth = ctx.header('authorization');
    if (!auth) throw new HttpError(401, 'Missing Authentication header', 'authentication');
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    const record = m ? store.findKey(m[1]!) : undefined;
    if (!record) throw new HttpError(401, 'Invalid API key', 'authentication');
    if (access === 'management' && record.kind !== 'management') {
      throw new HttpError(403, 'Only management keys can perform this operation', 'permission_denied');
    }
    ctx.key = record;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  batches.resumeAll();
  const host = opts.host ?? '127.0.0.1';
  return {
    server,
    requestLog: log,
    batches,
    store,
    faults,
    port,
    apiRoot: `http://${host}:${port}/api`,
    close: () =>
      new Promise<void>((resolve) => {
        batches.stop();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}


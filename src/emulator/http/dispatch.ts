import type { IncomingMessage, ServerResponse } from 'node:http';
import { Ctx, HttpError, answerError } from './http.js';
import type { LogEntry, RequestLog } from './request-log.js';
import { FaultSpecError, type FaultBoard, type FaultRule } from './faults.js';
import type { Store } from '../state/store-api.js';
import { authenticate, type Routes } from './routes.js';
import { RequestBody, refuseEncodedBody, timeOutStalledBody, type BodyBudget } from './body.js';
import { answerPreflight } from './cors.js';
import { cameBack, LOOP_MESSAGE } from './loop-guard.js';

const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9_.~-]*)+$/;

export interface Dispatch {
  store: Store;
  routes: Routes;
  faults: FaultBoard;
  log: RequestLog;
  /** Bodies in memory across connections, and how long a body may send nothing. */
  bodies: BodyBudget;
  bodyIdleMs: number;
  /** The paths the log has kept, each once (at most PATHS_KEPT of them). */
  paths: Map<string, string>;
  /** A gateway's own name in `Via` (loop-guard.ts): a request bearing it is refused, a loop ended. */
  via?: string;
}

const PATHS_KEPT = 256;

/**
 * A path as the log keeps it: the one string already kept for it. Each entry's own (a slice of
 * node's request target, which it held too) was ~70 bytes per request that every young collection
 * copied and then promoted, as the log keeps a thousand.
 */
function keptPath(d: Dispatch, path: string): string {
  const kept = d.paths.get(path);
  if (kept !== undefined) return kept;
  if (d.paths.size < PATHS_KEPT) d.paths.set(path, path);
  return path;
}

function logEntry(d: Dispatch, req: IncomingMessage, path: string, search: URLSearchParams | undefined): LogEntry {
  let query: Record<string, string[]> | undefined;
  if (search) for (const [k, v] of search) ((query ??= {})[k] ??= []).push(v);
  return d.log.add(req.method ?? 'GET', keptPath(d, path), query, req.headers, Date.now());
}

/**
 * Applies an injected fault that answers instead of the route (a reset, a status), or loses its answer; true
 * when the route is not to run. A `slow` fault's pause is dispatch's to wait (the one fault that waits).
 */
function applyFault(fault: FaultRule, req: IncomingMessage, res: ServerResponse): boolean {
  if (fault.kind === 'reset') {
    req.socket.destroy();
    return true;
  }
  if (fault.kind === 'lost') {
    // Carried out in full; the answer never arrives.
    res.writeHead = (() => res) as typeof res.writeHead;
    res.write = (() => true) as typeof res.write;
    res.end = (() => {
      req.socket.destroy();
      return res;
    }) as typeof res.end;
    return false;
  }
  if (fault.kind === 'held') {
    // Carried out in full; the answer is never sent (with `after=N`, only its head and N KiB of it), and the connection stays open until the client goes.
    if (fault.after === undefined) res.writeHead = (() => res) as typeof res.writeHead;
    let room = (fault.after ?? 0) * 1024;
    const write = res.write.bind(res) as (bytes: Buffer) => boolean;
    const pass = (chunk: unknown) => {
      if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return;
      const bytes = Buffer.from(chunk).subarray(0, room);
      room -= bytes.length;
      if (bytes.length) write(bytes);
    };
    res.write = ((chunk: unknown) => (fault.after !== undefined && pass(chunk), true)) as typeof res.write;
    res.end = ((chunk: unknown) => {
      if (fault.after === undefined) return res;
      res.flushHeaders();
      if (typeof chunk !== 'function') pass(chunk);
      return res;
    }) as typeof res.end;
    return false;
  }
  // One provider's failure is the routing's to meet (fake-route.ts, provider-fault.ts), not the request's.
  if (fault.kind === 'status' && fault.provider === undefined) {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
    throw new HttpError(fault.status!, `Injected fault: HTTP ${fault.status}`, undefined, headers);
  }
  return false;
}

/** One request: the API root, the request log, the route and its key, then faults, then the handler. */
export async function dispatch(d: Dispatch, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // A browser's preflight, for any path: no key comes with it.
  if (req.method === 'OPTIONS') return answerPreflight(req, res);
  // A plain path (no query, no dot segments, nothing to decode) is its own pathname: no URL to parse.
  const target = req.url ?? '/';
  let url: URL | undefined;
  if (!PLAIN_PATH.test(target)) {
    try {
      url = new URL(target, 'http://localhost');
    } catch {
      return answerError(res, 400, 'malformed request target');
    }
  }
  const pathname = url ? url.pathname : target;
  if (!pathname.startsWith('/api/')) return answerError(res, 404, `Not found: ${pathname}; the API root is /api`);
  if (d.via !== undefined && cameBack(req.headers.via, d.via)) return answerError(res, 508, LOOP_MESSAGE);
  const path = pathname.slice(4);
  const admin = path.startsWith('/_emulator/');
  const entry = admin ? undefined : logEntry(d, req, path, url?.search ? url.searchParams : undefined);
  timeOutStalledBody(req, res, d.bodyIdleMs);
  const ctx = new Ctx(req, res, d.store, undefined, entry, url, new RequestBody(req, res, d.bodies));
  try {
    // Shaped before the route is found: a 404 or 405 under another format's route is in that format.
    d.routes.shapeOf(path)?.(ctx);
    const match = d.routes.find(req.method ?? 'GET', path);
    // Faults are honoured only for a caller whose key was accepted.
    authenticate(ctx, d.store, match.access, match.keyHeader);
    if (entry) entry.workspace = ctx.key.workspace;
    // After the workspace is known: a 415 is in its key's request log, as other refusals are.
    refuseEncodedBody(req);
    ctx.params = match.params;
    if (!admin) {
      const header = req.headers['x-router-fault'];
      try {
        ctx.fault = d.faults.take(path, typeof header === 'string' ? header : undefined, ctx.key.workspace, req.method);
      } catch (err) {
        if (err instanceof FaultSpecError) throw new HttpError(400, err.message);
        throw err;
      }
    }
    // No fault (nearly every request): nothing awaited before the route.
    const fault = ctx.fault;
    // Unref'd: a parked slow fault never keeps a stopping emulator alive.
    if (fault?.kind === 'slow') await new Promise((r) => setTimeout(r, fault.delayMs).unref());
    else if (fault && applyFault(fault, req, res)) return;
    await match.handler(ctx);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    req.resume();
    ctx.error(err.status, err.message, err.errorType, err.headers, err.fields);
  }
}

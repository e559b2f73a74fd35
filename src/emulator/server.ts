import { createServer, type Server, type ServerResponse } from 'node:http';
import { answersAfterCharges } from './http/answer-after-charges.js';
import type { AddressInfo, Socket } from 'node:net';
import { answerError, type LoggedRequest } from './http/http.js';
import { RequestLog } from './http/request-log.js';
import { Routes } from './http/routes.js';
import { dispatch } from './http/dispatch.js';
import { BODY_IDLE_MS, BodyBudget } from './http/body.js';
import { closeWhenConnectionCloses } from './http/queued-answer.js';
import { storageFailure } from './state/storage-failure.js';

export type { Access, Handler } from './http/http.js';
import { FaultBoard, parseFault } from './http/faults.js';
import { StateStore } from './state/store.js';
import type { Store } from './state/store-api.js';
import { chatRoutes } from './resources/chat.js';
import { messagesRoutes } from './resources/messages.js';
import { adminRoutes } from './resources/admin.js';
import { embeddingsRoutes } from './resources/embeddings.js';
import { responsesRoutes } from './resources/responses.js';
import { BatchEngine, batchRoutes } from './batches/batches.js';
import { speechRoutes } from './resources/speech.js';
import type { Flavor } from './batches/batch-flavor.js';
export { FLAVORS, type Flavor } from './batches/batch-flavor.js';
import { decisionRoutes } from './resources/decisions.js';
import { accountRoutes } from './resources/account.js';
import { keyRoutes } from './resources/keys.js';
import { modelEndpointRoutes } from './resources/model-endpoints.js';
import { providerRoutes } from './resources/providers.js';
import { generationContentRoutes } from './resources/generation-content.js';
import { analyticsRoutes } from './resources/analytics.js';
import { Gateway, type GatewayOptions } from './routing/gateway.js';
import { generationRoutes } from './resources/generations.js';

/** Every route the emulator serves: each resource's table, and nothing registered anywhere else. */
const TABLES = [chatRoutes, messagesRoutes, responsesRoutes, embeddingsRoutes, speechRoutes, decisionRoutes, batchRoutes, accountRoutes, keyRoutes, modelEndpointRoutes, providerRoutes, generationRoutes, generationContentRoutes, analyticsRoutes, adminRoutes];

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
  /** The shape of the service (batches, decisions): `spec` (api.md's, the default) or `deployed` (as the real service runs it). */
  flavor?: Flavor;
  /** Bytes of request bodies held in memory at once, across connections (default 96 MiB): past it, 503. */
  bodiesInFlightBytes?: number;
  /** A request body that sends nothing for this long is answered 408 and closed (default 30 s). */
  bodyIdleMs?: number;
  /** Upstream providers (`router serve --providers`), and cassettes to record into or replay from. */
  gateway?: Omit<GatewayOptions, 'now'>;
  /** Where keys, credits, batches and generations are kept (default: files in `stateDir`). */
  store?: Store;
}


export interface Emulator {
  server: Server;
  /** Requests received (not the admin ones), oldest first, as they are now (a copy each time); no header carrying a credential is recorded (isSecretHeader). */
  readonly requestLog: LoggedRequest[];
  /** Empties the request log. */
  clearRequestLog(): void;
  batches: BatchEngine;
  store: Store;
  faults: FaultBoard;
  /** Bytes of request bodies held in memory now, across connections. */
  bodies: BodyBudget;
  apiRoot: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The responses not closed yet, counted, not kept. A Set that every request added its response to
 * and took it from again rehashed its table every few requests, and V8 keeps an obsolete table's
 * entries and a link to the next table (for iterators): once one of them was in the old generation,
 * each table after it, every response in them and all a response reaches (its request, its
 * listeners, a relayed stream's state) outlived every young collection until the next full one.
 */
class OpenAnswers {
  private open = 0;
  private idle: (() => void) | undefined;
  private readonly closed = () => {
    if (--this.open === 0) this.idle?.();
  };

  opened(res: ServerResponse): void {
    this.open++;
    res.once('close', this.closed);
  }

  /** Resolves once every response open has closed, or after `ms`, whichever comes first. */
  ended(ms: number): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.idle = undefined;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.idle = done;
    });
  }
}

export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  const store = opts.store ?? new StateStore(opts.stateDir);
  const faults = new FaultBoard();
  faults.set((opts.faults ?? []).map(parseFault));
  const log = new RequestLog(opts.logLimit ?? 1000);

  const gateway = opts.gateway ? new Gateway({ ...opts.gateway, now: () => store.now(), estimates: store.estimates }) : undefined;
  const batches = new BatchEngine(store, { delayMs: opts.batchDelayMs ?? 20, gateway, flavor: opts.flavor });
  const sockets = new Set<Socket>();
  const parts = { faults, log, batches, gateway, providers: opts.gateway?.config.providers, sockets, flavor: opts.flavor ?? 'spec' };
  const routes = new Routes(TABLES.flatMap((table) => table(parts)));
  const d = { store, routes, faults, log, bodies: new BodyBudget(opts.bodiesInFlightBytes), bodyIdleMs: opts.bodyIdleMs ?? BODY_IDLE_MS, paths: new Map<string, string>(), via: gateway?.via };

  const answering = new OpenAnswers();
  const server = createServer({ ServerResponse: answersAfterCharges(() => store.flushCharges?.()) }, (req, res) => {
    answering.opened(res);
    closeWhenConnectionCloses(req, res);
    dispatch(d, req, res).catch((err) => {
      // A state file that cannot be written (a full disk): the request fails in words, the server goes on.
      const why = storageFailure(err);
      const what = why ? `the emulator cannot save its state: ${why}` : undefined;
      if (!res.headersSent) {
        answerError(res, 500, what ?? 'Internal Server Error');
      } else res.destroy();
      // A client that hung up mid-request is not a failure of ours; anything else is one line, no stack.
      const e = err as NodeJS.ErrnoException;
      if (e?.message === 'aborted' || e?.code === 'ECONNRESET' || e?.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
      process.stderr.write(why ? `emulator: ${why} (answered 500 to ${req.method} ${req.url})\n` : `emulator: internal error on ${req.method} ${req.url}: ${e?.message ?? String(err)}\n`);
    });
  });
  // An idle connection kept 65 s, as services behind load balancers keep theirs (node's default is 5 s).
  // A close crossing a request on the wire fails that request, and a paid one is not sent again: with
  // 5 s, calls a few seconds apart (a script's loop, `chat -i`, tests on a loaded machine) met it.
  server.keepAliveTimeout = 65_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  batches.resumeAll();
  const host = opts.host ?? '127.0.0.1';
  let closing: Promise<void> | undefined;
  return {
    server,
    get requestLog() {
      return log.entries();
    },
    clearRequestLog: () => log.remove(() => true),
    batches,
    store,
    faults,
    bodies: d.bodies,
    port,
    apiRoot: `http://${host.includes(':') ? `[${host}]` : host}:${port}/api`,
    // Once: a second stop (a finally after a stop, two signals) is the first one. Two stops each waiting on
    // the open answers left the first to its 1 s bound, its wake-up taken by the second.
    close: () => (closing ??= stop()),
  };

  async function stop(): Promise<void> {
    batches.stop();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    if (gateway) {
      // Upstream requests in flight are let go first: a stream relayed ends with the error chunk and
      // [DONE], never cut bare; a batch request's answer is not kept (the restart asks again).
      await gateway.close();
      await answering.ended(1000);
      // Again: a cassette kept by an answer that ended meanwhile is written too (closing twice is safe).
      await gateway.close();
    }
    for (const s of sockets) s.destroy();
    await stopped;
    // Last, so that a save that fails (a full disk) is said but never keeps the server listening.
    await store.idle();
    store.close();
  }
}


import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { randomHex } from './ids.js';
import type { FaultRule } from './faults.js';
import { Serialized } from './serialized.js';
import { CORS_HEADERS } from './cors.js';
import { scanJson } from '../../internal/json-scan.js';
import type { GenerationMark, KeyRecord, Store } from '../state/store-api.js';
import type { MetadataAsk } from '../routing/routed.js';
import type { LogEntry } from './request-log.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorType?: string,
    readonly headers: Record<string, string> = {},
    /** Fields beside `error` in the answer's body (a gateway's `router_metadata`). */
    readonly fields?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  401: 'authentication',
  402: 'payment_required',
  403: 'permission_denied',
  404: 'not_found',
  410: 'not_found',
  413: 'payload_too_large',
  422: 'unprocessable',
  429: 'rate_limit_exceeded',
  500: 'server',
  502: 'provider_unavailable',
  503: 'provider_unavailable',
  508: 'server',
  524: 'timeout',
  529: 'provider_overloaded',
};

export function errorTypeFor(status: number): string {
  return TYPE_BY_STATUS[status] ?? 'unmapped';
}

export function errorBody(status: number, message: string, errorType = errorTypeFor(status)) {
  return { error: { code: status, message, metadata: { error_type: errorType } } };
}

export const requestId = () => `req_${randomHex(10)}`;

export { LOG_BODY_BYTES, LoggedRequest } from './logged-request.js';
/** JSON nested deeper than this is refused with 400 (documented in docs/conformance.md). */
export const MAX_JSON_DEPTH = 64;

/** A request's body: read whole, or, for a route that streams it, its bytes held counted (503 past the server's budget). */
export interface BodySource {
  receive(limit?: number): Promise<Buffer>;
  hold(total: number): void;
  /** Whether one body of `total` bytes could ever be held. */
  couldHold(total: number): boolean;
}

/** What a route refuses before parsing: the most entries a top-level member's value holds, and the refusal's words. */
export type BeforeParse = Record<string, { max: number; of: 'object' | 'array'; message: string }>;

/** Answers waiting for the end of this turn of the event loop. */
const answers: [ServerResponse, string][] = [];

/**
 * Ends `res` with `text` once every request that arrived with it has been handled: their answers
 * then go out back to back. Written one by one, spaced by the work between them, each write had to
 * wake a client that had gone back to sleep, which cost the kernel ~3x the write itself.
 */
function endThisTurn(res: ServerResponse, text: string): void {
  if (answers.push([res, text]) === 1) setImmediate(endAnswers);
}

/** Work that waits for those answers to go out (afterAnswers). */
const after: (() => void)[] = [];

function endAnswers(): void {
  for (const [res, text] of answers.splice(0)) res.end(text);
  for (const work of after.splice(0)) contained(work);
}

/** Runs `work`; a throw is said on stderr, one line: its answer is out, nothing is left to answer it to. */
function contained(work: () => void): void {
  try {
    work();
  } catch (err) {
    process.stderr.write(`emulator: internal error after an answer went out: ${(err as Error)?.message ?? String(err)}\n`);
  }
}

/**
 * Runs `work` once the answers waiting for this turn's end have gone out (at once when none waits):
 * what a caller does not need before its answer's last byte (a generation's record) no longer delays
 * it. Still in this turn, before any other request is read: a call made after its answer finds it done.
 * A throw of `work` is contained: said on stderr, the answers and the work after it unaffected.
 */
export function afterAnswers(work: () => void): void {
  if (answers.length) after.push(work);
  else contained(work);
}

/** A JSON answer with its length (without it: chunked encoding, several writes) and a request id. */
export function answerJson(res: ServerResponse, status: number, text: string, id: string, headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers, 'x-request-id': id, ...CORS_HEADERS });
  endThisTurn(res, text);
}

/** An error answer before any route took the request (a malformed target, an internal failure). */
export function answerError(res: ServerResponse, status: number, message: string): void {
  answerJson(res, status, JSON.stringify(errorBody(status, message)), requestId());
}

/** Everything a route handler needs about one request. */
export class Ctx {
  readonly requestId = requestId();
  key!: KeyRecord;
  params: Record<string, string> = {};
  private bodyCache: Promise<Buffer> | undefined;
  /** The bytes of the body json() parsed (0 before): what keeping it costs, roughly. */
  bodyBytes = 0;
  /** The bytes of the JSON json() parsed: what generation content keeps of the request (the request log keeps them too). */
  bodyRaw: Buffer | undefined;
  /** The id of the generation this request's charges pay for, once it is made: a file store journals it with them. */
  generation: string | undefined;
  /** The model and provider answering it, once chosen: journaled with its charges (a record made again after a kill -9 says them). */
  servedBy: { model: string; provider: string } | undefined;
  /** A route's own format for a whole answer's JSON (its `shape`'s), taken before a fault mangles it: the mangled text then goes out as it is. */
  shapeWhole: ((text: string, status: number) => string) | undefined;

  /** What this request's charges pay for, as the store journals it. */
  get paying(): GenerationMark | undefined {
    return this.generation === undefined ? undefined : { id: this.generation, ...this.servedBy };
  }

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly store: Store,
    public fault: FaultRule | undefined,
    readonly log: LogEntry | undefined,
    /** The request target parsed, when dispatch had to; else parsed on first use. */
    private parsedUrl: URL | undefined,
    /** The body as it arrives (body.ts). */
    readonly body: BodySource,
  ) {}

  get url(): URL {
    return (this.parsedUrl ??= new URL(this.req.url ?? '/', 'http://localhost'));
  }

  /** The status line and headers, with this request's id (every answer carries it). */
  head(status: number, headers: OutgoingHttpHeaders): void {
    headers['x-request-id'] = this.requestId;
    this.res.writeHead(status, Object.assign(headers, CORS_HEADERS));
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }

  get workspace(): string {
    return this.key.workspace;
  }

  /** The whole body, read once (body.ts: within the server's budget of bodies in flight). */
  rawBody(limit?: number): Promise<Buffer> {
    return (this.bodyCache ??= this.body.receive(limit));
  }

  /** The body parsed, once the bytes showed nothing it would be refused for (depth, `refuse`'s entry counts). */
  async json<T = Record<string, unknown>>(refuse: BeforeParse = {}): Promise<T> {
    const raw = await this.rawBody();
    this.bodyBytes = raw.length;
    const verdict = scanJson(raw, { maxDepth: MAX_JSON_DEPTH, entries: refuse });
    if (verdict && 'tooDeep' in verdict) throw new HttpError(400, `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (verdict) throw new HttpError(400, refuse[verdict.member]!.message);
    const text = raw.toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'request body is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HttpError(400, 'request body must be a JSON object');
    this.bodyRaw = raw;
    // The bytes, not the tree (parsed again only when the log is read).
    this.log?.keepBody(raw, raw.length);
    return parsed as T;
  }

  /** Sends `body` as JSON; a Serialized body is already its JSON text. */
  send(status: number, body: unknown, headers: Record<string, string> = {}): void {
    let text = body instanceof Serialized ? body.json : JSON.stringify(body);
    const res = this.res;
    if (this.fault?.kind === 'malformed' || this.fault?.kind === 'cut') text = this.shapeWhole?.(text, status) ?? text;
    if (this.fault?.kind === 'malformed') {
      this.head(status, { 'content-type': 'application/json' });
      res.end(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
      return;
    }
    if (this.fault?.kind === 'cut') {
      this.head(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
      res.write(text.slice(0, Math.floor(text.length / 2)));
      setTimeout(() => res.destroy(), 10);
      return;
    }
    answerJson(this.res, status, text, this.requestId, headers);
  }

  error(status: number, message: string, errorType?: string, headers: Record<string, string> = {}, fields?: Record<string, unknown>): void {
    if (this.res.headersSent) {
      this.res.destroy();
      return;
    }
    answerJson(this.res, status, JSON.stringify({ ...errorBody(status, message, errorType), ...fields }), this.requestId, headers);
  }

  /** Resolves the session id: the body's `session_id` wins over the `x-session-id` header. */
  sessionId(body: { session_id?: unknown }): string | undefined {
    const fromBody = body.session_id;
    if (fromBody !== undefined && fromBody !== null) {
      if (typeof fromBody !== 'string') throw new HttpError(400, 'session_id must be a string');
      return fromBody;
    }
    const fromHeader = this.header('x-session-id');
    if (fromHeader !== undefined && fromHeader.length > 256) throw new HttpError(400, 'the x-session-id header must be at most 256 characters');
    return fromHeader;
  }

  /** Which routing-metadata fields the headers ask for: each name of the opt-in header answers its own field. */
  wantsRouterMetadata(): MetadataAsk {
    const on = (name: string) => this.header(name) === 'enabled';
    return { router: on('x-router-metadata') || on('x-router-experimental-metadata'), openrouter: on('x-openrouter-metadata') || on('x-openrouter-experimental-metadata') };
  }
}

export type Handler = (ctx: Ctx) => Promise<void>;
/** Who may call a route: any key of a workspace, or only its management key. */
/** `admin`: a management key (acting on its own workspace) or the operator key (acting on all). */
export type Access = 'any' | 'management' | 'admin' | 'operator';

import type { IncomingHttpHeaders } from 'node:http';
import { isSecretHeader } from '../../internal/secret-headers.js';

/** A body larger than this is logged as its size only. */
export const LOG_BODY_BYTES = 64 * 1024;

/** Bytes of the bodies a request log holds, and how many entries it had when they were counted. */
export interface LogMeter {
  bytes: number;
  entries: number;
}

/** The query of a request that has none: one object for all of them. */
const NO_QUERY: Record<string, string[]> = Object.freeze({}) as Record<string, string[]>;

/**
 * One request of the request log (`GET /_emulator/requests`, `Emulator.requestLog`): its method,
 * path, query, headers (never one that carries a credential: isSecretHeader), body, and when it came. Kept compact, as the gateway
 * keeps a thousand of them under load and every young-generation collection copied each one: the
 * headers it shows as one string of names and values (an object when first read), never node's
 * headers object (that would keep the caller's credentials as long as the entry), the body as the
 * JSON text that came (parsed when first read), instead of an object per header set and a tree per body.
 */
export class LoggedRequest {
  readonly query: Record<string, string[]>;
  /** The caller's workspace, once its key was accepted. */
  workspace?: string;
  /** Bytes of the body kept (the request log is bounded by these). */
  bodyBytes?: number;
  /**
   * The headers shown, until first read, as one string: `name\nvalue\nname\nvalue…` (neither holds a
   * line end). A list of names and values was an array and a string per value for every young
   * collection to copy: a thousand entries at 500/s were about half of what each one copied.
   */
  #headers: string | Record<string, string>;
  #text: string | undefined;
  #body: unknown;
  readonly #meter: LogMeter | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    query: Record<string, string[]> | undefined,
    headers: IncomingHttpHeaders,
    readonly at: number,
    meter?: LogMeter,
  ) {
    this.query = query ?? NO_QUERY;
    const shown: string[] = [];
    for (const k in headers) {
      const v = headers[k];
      if (typeof v === 'string' && !isSecretHeader(k)) shown.push(k, v);
    }
    this.#headers = shown.join('\n');
    this.#meter = meter;
  }

  /** The request's headers less those carrying credentials (and any header sent more than once). */
  get headers(): Record<string, string> {
    const kept = this.#headers;
    if (typeof kept !== 'string') return kept;
    const headers: Record<string, string> = {};
    const parts = kept ? kept.split('\n') : [];
    for (let i = 0; i < parts.length; i += 2) headers[parts[i]!] = parts[i + 1]!;
    return (this.#headers = headers);
  }

  /** The parsed body, or `{ truncated: true, bytes }` for a body over LOG_BODY_BYTES. */
  get body(): unknown {
    if (this.#text !== undefined) {
      this.#body = JSON.parse(this.#text);
      this.#text = undefined;
    }
    return this.#body;
  }

  /** Records the body: small ones whole (`text`: its JSON, parsed when read), large ones by size. */
  keepBody(body: { parsed: unknown } | { text: string }, bytes: number): void {
    const kept = Math.min(bytes, LOG_BODY_BYTES);
    if (bytes > LOG_BODY_BYTES) [this.#body, this.#text] = [{ truncated: true, bytes }, undefined];
    else if ('text' in body) [this.#body, this.#text] = [undefined, body.text];
    else [this.#body, this.#text] = [body.parsed, undefined];
    if (this.#meter) this.#meter.bytes += kept - (this.bodyBytes ?? 0);
    this.bodyBytes = kept;
  }

  toJSON(): Record<string, unknown> {
    return { method: this.method, path: this.path, query: this.query, headers: this.headers, body: this.body, at: this.at, workspace: this.workspace, bodyBytes: this.bodyBytes };
  }
}

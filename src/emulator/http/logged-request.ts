/** A body larger than this is logged as its size only. */
export const LOG_BODY_BYTES = 64 * 1024;

/**
 * One request of the request log as its readers get it (`GET /_emulator/requests`, `Emulator.requestLog`):
 * its method, path, query, headers (never one that carries a credential: isSecretHeader), body, and when
 * it came. Made when the log is read, from what the log keeps as bytes (request-log.ts); the headers and
 * the body are parsed when first read.
 */
export class LoggedRequest {
  #headers: string | Record<string, string>;
  #text: string | undefined;
  #body: unknown;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: Record<string, string[]>,
    /** `name\nvalue\nname\nvalue…` (neither holds a line end). */
    headers: string,
    /** The body's JSON text, or what stands for a body not kept whole. */
    body: { text: string } | { value: unknown },
    readonly at: number,
    /** The caller's workspace, once its key was accepted. */
    readonly workspace: string | undefined,
    /** Bytes of the body kept (the request log is bounded by these). */
    readonly bodyBytes: number | undefined,
  ) {
    this.#headers = headers;
    if ('text' in body) this.#text = body.text;
    else this.#body = body.value;
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

  toJSON(): Record<string, unknown> {
    return { method: this.method, path: this.path, query: this.query, headers: this.headers, body: this.body, at: this.at, workspace: this.workspace, bodyBytes: this.bodyBytes };
  }
}

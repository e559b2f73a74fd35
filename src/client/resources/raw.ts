import type { Query, RawResponse } from '../core.js';
import { callHeaders, Resource, type CallOptions } from './shared.js';

export interface RawRequest {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';
  /** Relative to the API root: `/v1/batches`, `/alpha/decisions`. */
  path: string;
  query?: Query | undefined;
  headers?: Record<string, string> | undefined;
  /** A body sent as given (JSON text or bytes). */
  body?: string | Uint8Array | undefined;
}

/** Any endpoint, authenticated: the answer whatever its status (transient ones retried, for GET only). */
export class Raw extends Resource {
  send(req: RawRequest, opts: CallOptions = {}): Promise<RawResponse> {
    return this.core.send({ method: req.method, path: req.path, base: 'root', query: req.query, headers: { ...callHeaders(opts), ...req.headers }, bodyFactory: req.body === undefined ? undefined : () => req.body!, contentType: req.body === undefined ? undefined : 'application/json', anyStatus: true, retry: req.method === 'GET' ? 'always' : 'unaccepted', signal: opts.signal, timeoutMs: opts.timeoutMs });
  }
}

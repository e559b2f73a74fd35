import type { HttpCore, RawResponse } from '../core.js';
import { bodyChunks } from '../core.js';
import { ConnectionError, ProtocolError } from '../errors.js';
import { parseSSE } from '../sse.js';

/** Per-call options shared by every resource method. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Sent as `x-session-id`; a `session_id` in the body wins on the server. */
  sessionId?: string;
  /** Opt in to `router_metadata` on chat and Responses answers. */
  routerMetadata?: boolean;
  headers?: Record<string, string>;
}

export function callHeaders(opts: CallOptions = {}): Record<string, string | undefined> {
  return {
    'x-session-id': opts.sessionId,
    'x-router-experimental-metadata': opts.routerMetadata ? 'enabled' : undefined,
    ...opts.headers,
  };
}

export abstract class Resource {
  constructor(protected readonly core: HttpCore) {}
}

/**
 * Yields each JSON `data:` payload of an event stream, stopping at `[DONE]`.
 * A stream that ends without its terminator was cut: that is a ConnectionError.
 */
export async function* jsonEvents(
  res: RawResponse,
  url: string,
  opts: { terminator?: string; isFinal?: (event: { event?: string; data: unknown }) => boolean } = {},
): AsyncGenerator<{ event: string | undefined; data: unknown }> {
  let finished = false;
  for await (const ev of parseSSE(bodyChunks(res, url))) {
    if (opts.terminator !== undefined && ev.data === opts.terminator) {
      finished = true;
      break;
    }
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      throw new ProtocolError(`server sent a malformed stream event: ${ev.data.slice(0, 80)}`);
    }
    const item = { event: ev.event, data };
    yield item;
    if (opts.isFinal?.(item)) {
      finished = true;
      break;
    }
  }
  if (!finished) throw new ConnectionError('the stream ended before it was complete', { maybeDelivered: true });
  await res.body.dump().catch(() => {});
}

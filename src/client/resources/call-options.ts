import type { RequestOptions } from '../core.js';

/**
 * Per-call options of a call the service routes to no model (batches, keys, credits, listings): a session or
 * routing metadata would mean nothing there, so those calls refuse them (`RESOURCE_CALLS`).
 */
export interface PlainCallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  headers?: Record<string, string> | undefined;
}

/** Per-call options of a call routed to a model (chat, Responses, embeddings, speech), and of `raw.send()`. */
export interface CallOptions extends PlainCallOptions {
  /** Sent as `x-session-id`; a `session_id` in the body wins on the server. */
  sessionId?: string | undefined;
  /**
   * Opt in to routing metadata on chat, Responses, embeddings and speech answers: sends api.md's legacy header and the
   * deployed service's `X-OpenRouter-Metadata`; the answer carries `router_metadata` or
   * `openrouter_metadata` (routingMetadata() reads either).
   */
  routerMetadata?: boolean | undefined;
}

/** Options of a call the service charges whose answer comes whole. */
export interface AnsweringOptions extends CallOptions {
  /**
   * Called with the answer's generation id as its head arrives (an `x-generation-id` header, which
   * `router serve` sends), before its body: a caller killed while the body comes can still be reconciled by it.
   */
  answering?: ((generationId: string) => void) | undefined;
}

/** The call options less `answering`, and the request's `onHead` that hands `answering` the head's generation id. */
export function answeringHead(opts: AnsweringOptions): [CallOptions, Partial<RequestOptions>] {
  const { answering, ...call } = opts;
  if (!answering) return [call, {}];
  return [call, { onHead: (headers) => {
    const id = [headers['x-generation-id']].flat()[0];
    if (id) answering(id);
  } }];
}

export function callHeaders(opts: CallOptions = {}): Record<string, string | undefined> {
  return {
    'x-session-id': opts.sessionId,
    'x-router-experimental-metadata': opts.routerMetadata ? 'enabled' : undefined,
    'x-openrouter-metadata': opts.routerMetadata ? 'enabled' : undefined,
    ...opts.headers,
  };
}

import type { Ctx } from '../http/http.js';
import type { FaultRule } from '../http/faults.js';

/**
 * The provider seam: what the gateway asks of any provider (the fake models, an OpenAI-compatible
 * upstream, a cassette of one). Routing picks adapters per request (routing/); adapters never route.
 */

/** One model a provider serves: the gateway's id, the upstream's name for it, its prices when configured. */
export interface ProviderModel {
  id: string;
  /** What the model does (chat when absent). */
  kind?: 'chat' | 'embedding' | 'speech';
  upstream: string;
  /** USD per token; without them the upstream's own `usage.cost` is charged (0 when it has none). */
  prices?: { prompt: number; completion: number };
  /**
   * Without `prices`: the per-token prices the upstream's last answer reported (its `usage.cost_details`
   * over its tokens), what a hang-up before the next answer's usage is charged at (routing/usage.ts).
   */
  reported?: { prompt: number; completion: number };
  /** The most completion tokens one answer of it holds (`max_completion_tokens`): a request without a limit is bounded by it. */
  maxCompletionTokens?: number;
  /** The request parameters the model list says it takes (`supported_parameters`, chat only): UPSTREAM_CHAT_PARAMETERS when absent. */
  parameters?: string[];
}

/**
 * How an adapter hears that its caller went: the members of an AbortSignal it uses. The gateway's
 * own (routing/caller-gone.ts) costs an object and an array per request, not an AbortSignal.
 */
export interface StopSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  /**
   * A whole answer's signal, which never aborts its upstream (read to its end after the caller goes, as
   * the service bills it): the caller's own going, for a replay, whose recorded answer is there at once.
   */
  readonly caller?: StopSignal;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A chat request as it goes upstream: the body already carries the upstream's model name. */
export interface UpstreamChat {
  body: Record<string, unknown>;
  stream: boolean;
  signal: StopSignal;
  /** The gateways the request came through, as its `Via` names them (http/loop-guard.ts): passed on before this one's. */
  via?: string;
}

export type UpstreamReply =
  /** A whole answer: any status the gateway does not pass over (2xx, and the caller's own 4xx). */
  | { kind: 'json'; status: number; headers: Record<string, string>; text: string }
  /** A 200 event stream: each `data:` payload as text, `[DONE]` included; throws where it breaks. */
  | { kind: 'stream'; status: number; headers: Record<string, string>; events: AsyncIterable<string> };

/** A stream's events that can hand over, without waiting, those already arrived after the one next() gave. */
export interface QueuedEvents {
  /** Gives the payloads already here to `relayed` in order; true when it said the stream is over (the rest dropped). */
  eachQueued(relayed: (data: string) => boolean): boolean;
  /** What `data` parsed to when the stream judged it (first_event_timeout_ms), given once (it may be changed then); undefined when it was not. */
  takeParsed?(data: string): unknown;
}

/** An upstream's spoken answer: a 2xx with its audio as it comes (throws ProviderFailure where it breaks), or the caller's own 4xx. */
export interface AudioReply {
  status: number;
  headers: Record<string, string>;
  audio: AsyncIterable<Buffer>;
}

export interface ProviderAdapter {
  /** The provider slug, as `provider.only / order / ignore` name it. */
  readonly name: string;
  models(): ProviderModel[];
  /** Throws ProviderFailure when the next provider should be tried instead. */
  chat(req: UpstreamChat): Promise<UpstreamReply>;
  /** `POST /embeddings`, never streamed; absent where the provider has none. */
  embeddings?(req: UpstreamChat): Promise<UpstreamReply>;
  /** `POST /responses`, streamed or not; absent where the provider has none (`responses: true` in the file). */
  responses?(req: UpstreamChat): Promise<UpstreamReply>;
  /** `POST /audio/speech`; absent where the provider has no speech models. */
  speech?(req: UpstreamChat): Promise<AudioReply>;
}

/** `missing`: on replay, no cassette holds this request to the provider (passed over like a dead one); `stopping`: the gateway let it go as it stopped. */
export type FailureReason = 'refused' | 'timeout' | 'status' | 'broken' | 'unavailable' | 'missing' | 'stopping';

/** An upstream that could not answer: refused, too slow, a 429 or 5xx, a stream broken before its first token. */
export class ProviderFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
    readonly status?: number,
    /** The upstream's `Retry-After` with a 429 or 503. */
    readonly retryAfter?: string,
    /** What to check, said after the upstream's words once they are rid of its key (a cut key is found at their end). */
    readonly hint?: string,
  ) {
    super(message);
  }

  /** Known never sent (a connect that timed out): asking again cannot generate the answer twice (routing/gateway.ts complete()). */
  unsent = false;

  /** The canonical cause the upstream's own words gave (upstream-cause.ts: an error status's body), when it gave one. */
  errorType: string | undefined;
}

/** A failure's canonical cause: the one its upstream named, a timeout's, else the provider failing. */
export const failureCause = (failure: ProviderFailure): string => failure.errorType ?? (failure.reason === 'timeout' ? 'timeout' : 'provider_unavailable');

/**
 * Statuses after which the next provider is tried; any other non-2xx is the caller's and goes back to them.
 * A 402 is the gateway's own account at the provider out of credits, as a 401 is its key wrong: not the caller's.
 */
export function passesOver(status: number): boolean {
  return status === 401 || status === 402 || status === 403 || status === 404 || status === 408 || status === 429 || status >= 500;
}

/** The hook chat.ts and the model list call (routing/gateway.ts): nothing else of the gateway is theirs. */
import type { Measured } from '../routing/measures.js';

export interface ChatGateway {
  takes(body: Record<string, unknown>): boolean;
  chat(ctx: Ctx, body: Record<string, unknown>): Promise<void>;
  listing(): Record<string, unknown>[];
  /** What it measured of a provider's answers for a model (seconds, tokens a second); undefined when none. */
  shown(provider: string, model: string): Measured | undefined;
  takesEmbeddings(body: Record<string, unknown>): boolean;
  embed(ctx: Ctx, body: Record<string, unknown>): Promise<void>;
  takesResponses(body: Record<string, unknown>): boolean;
  respond(ctx: Ctx, body: Record<string, unknown>): Promise<void>;
  takesSpeech(body: Record<string, unknown>): boolean;
  speak(ctx: Ctx, body: Record<string, unknown>): Promise<void>;
}

/** The hook the batch engine calls: a batch for an upstream model runs its requests through the gateway. */
export interface BatchGateway {
  /** Whether a batch of `endpoint` (chat when absent) for this model runs over providers. */
  serves(model: string, endpoint?: string): boolean;
  /** How many of one batch's requests are asked at once. */
  readonly batchConcurrency: number;
  /** One request's whole answer; `served.provider` is set to the provider that gave it. `fault`: the batch's `provider=` fault. */
  complete(body: Record<string, unknown>, endpoint?: string, served?: { provider?: string }, fault?: FaultRule): Promise<Record<string, unknown>>;
  /** The most one request can cost at full price (held before it is sent); undefined when nothing bounds it. */
  bound(body: Record<string, unknown>, endpoint?: string): number | undefined;
}

/** What says a stream's end ([DONE], a Responses final event): an object, so one made per request can be its relay too (answer-relay.ts). */
export interface EndRule {
  ends(data: string): boolean;
}

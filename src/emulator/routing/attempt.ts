/**
 * A provider passed over, and why (its status and `Retry-After` when it answered one); or a model id
 * that names no model here (provider `none`, status 400: candidates.ts).
 */
export interface Attempt {
  provider: string;
  model: string;
  error: string;
  status?: number;
  retryAfter?: string;
  /** The canonical cause of its failure (upstream-cause.ts): what the caller's `error_type` says when every provider asked failed so. */
  cause?: string;
  /** On replay: no cassette held the request. */
  missing?: true;
  /** An id of the models list that names no model: no provider was asked (what the asked ones said decides the answer). */
  unknown?: true;
  /**
   * A provider passed over before any was asked: a rule of `provider` (provider-rules.ts: what the request uses, or
   * another preference), or the request's own naming of providers (`named`: only, ignore; `choice`: allow_fallbacks false).
   */
  unasked?: 'parameters' | 'preferences' | 'named' | 'choice';
  /** A failure asking again soon would meet again: a refusal of the request or its key (4xx), a host that is not there. */
  lasting?: true;
}

/** Statuses a provider may answer otherwise soon: a timeout, a conflict, too early, too many requests (else a 4xx is its last word). */
const PASSING_4XX = new Set([408, 409, 425, 429]);
/** Whether a provider's status is its last word on the request (`lasting`): a 4xx but those above, and a loop (508: http/loop-guard.ts). */
export const lastingStatus = (status: number | undefined): boolean => status !== undefined && ((status >= 400 && status < 500 && !PASSING_4XX.has(status)) || status === 508);

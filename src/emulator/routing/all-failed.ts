import { HttpError } from '../http/http.js';
import type { Attempt } from './attempt.js';

/**
 * The answer when every candidate failed: a 502 naming each failure; a 429 when each was a 429 (the
 * caller should wait, not give up). The 502 says `x-should-retry: false` (openai-node's header, which
 * our client honours too) when each failure would come again: every provider was asked already, so a
 * client's retry would only ask them all again. A 5xx, a timeout or a break of any one leaves the choice to the client. When every provider said when to come back (`Retry-After` in
 * seconds or as an HTTP date), the answer says the soonest, in that provider's words. A replay that
 * found no cassette for any of them is a 404 naming the nearest cassette. Its `error_type` is the cause
 * every provider asked failed with (all overloaded, all timed out), else `provider_unavailable`.
 */
export function allFailed(passed: Attempt[], fields?: Record<string, unknown>): HttpError {
  // What the providers asked said decides it: an unknown id of the models list passed over is only named.
  const asked = passed.filter((a) => !a.unknown && !a.unasked);
  // On replay with no cassette for any of them: the request was never recorded, said as the first miss.
  if (asked.length && asked.every((a) => a.missing)) return new HttpError(404, asked[0]!.error, 'not_found');
  // The providers asked and what each said first; ids no provider was asked for (unknown, chat-only for Responses) after, as such.
  // Not those the request's only/ignore left out: it named whom to ask (the routing metadata still lists them).
  const skipped = passed.filter((a) => a.unknown || (a.unasked && a.unasked !== 'named')).map((a) => a.error);
  const why = asked.length && skipped.length ? `${said(asked.map((a) => a.error))}; passed over, no provider asked: ${skipped.join('; ')}` : said((asked.length ? asked : passed).map((a) => a.error));
  const retryAfter = soonestRetry(asked);
  const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {};
  if (asked.every((a) => a.lasting)) headers['x-should-retry'] = 'false';
  if (!asked.length || asked.some((a) => a.status !== 429)) return new HttpError(502, `All providers for the requested models are unavailable: ${why}`, sameCause(asked), headers, fields);
  return new HttpError(429, `All providers for the requested models are rate limited: ${why}`, undefined, headers, fields);
}

/** The cause each provider asked failed with, when they all said one (overloaded, a timeout, rate limited: upstream-cause.ts); else they are unavailable. */
function sameCause(asked: Attempt[]): string {
  const cause = asked[0]?.cause;
  return cause && asked.every((a) => a.cause === cause) ? cause : 'provider_unavailable';
}

/**
 * Failures in words, each once, in the order first said: a batch asks its providers again after
 * pauses, and the same page or refusal three times over (200 characters each) buried the others.
 */
function said(errors: string[]): string {
  const times = new Map<string, number>();
  for (const e of errors) times.set(e, (times.get(e) ?? 0) + 1);
  return [...times].map(([e, n]) => (n > 1 ? `${e} (${n} times)` : e)).join('; ');
}

/** The `Retry-After` that comes soonest, when each attempt gave one that parses (any one may answer then). */
function soonestRetry(passed: Attempt[]): string | undefined {
  let soonest: { value: string; at: number } | undefined;
  for (const a of passed) {
    const value = a.retryAfter?.trim() ?? '';
    const at = /^\d+$/.test(value) ? Date.now() + Number(value) * 1000 : /[a-z]/i.test(value) ? Date.parse(value) : NaN;
    if (!Number.isFinite(at)) return undefined;
    if (!soonest || at < soonest.at) soonest = { value, at };
  }
  return soonest?.value;
}

import type { Candidate } from './candidates.js';
import { lastingStatus, type Attempt } from './attempt.js';
import { asksMetadata, type MetadataAsk } from './routed.js';
import { modelChain } from './candidates.js';
import { ProviderFailure, failureCause } from '../providers/types.js';
import { openrouterShape, routingMetadata } from './metadata-shape.js';
import { maskKeyStarts, type KeyForm } from '../providers/key-scrub.js';
import { allFailed } from './all-failed.js';
import type { Measured } from './measures.js';

export type { Attempt } from './attempt.js';
export { noEndpoints } from './no-endpoints.js';
export { allFailed } from './all-failed.js';

/**
 * A candidate that failed: a provider's failure is kept in `passed` (the next candidate is asked); any
 * other error is thrown. One the gateway's stop caused ends the request there (the 502 of allFailed):
 * no other candidate, a fake model named as a fallback included, is asked while it stops.
 */
export function passOver(err: unknown, c: Candidate, passed: Attempt[], hide: (text: string) => string = (t) => t): void {
  if (!(err instanceof ProviderFailure)) throw err;
  passed.push({ provider: c.slug, model: c.model.id, error: `${hide(err.message)}${err.hint ? `: ${err.hint}` : ''}`, status: err.status, retryAfter: err.retryAfter, cause: failureCause(err), ...(err.reason === 'missing' && { missing: true as const }), ...(lasting(err) && { lasting: true as const }) });
  if (err.reason === 'stopping') throw allFailed(passed);
}

const lasting = (err: ProviderFailure) => err.reason === 'refused' || err.reason === 'unavailable' || err.reason === 'missing' || (err.reason === 'status' && lastingStatus(err.status));

/** Waits `ms` before all are asked again; false at once when every failure was a replay's miss (no cassette comes by waiting). */
export async function pauseAfter(ms: number, passed: Attempt[]): Promise<boolean> {
  if (passed.every((a) => a.missing || a.unknown || a.unasked)) return false;
  await new Promise((r) => setTimeout(r, ms).unref());
  return true;
}

/** `router_metadata` of a gateway answer (metadata-shape.ts); with no `chosen`, of the answer when every candidate failed (allFailed). */
export function gatewayMetadata(requested: string, candidates: Candidate[], chosen: Candidate | undefined, passed: Attempt[], startedAt: number, api = 'chat') {
  const endpoints = candidates.map((c) => ({ model: c.model.id, provider: c.slug, selected: c === chosen, ...(c.measured !== undefined && measuredFields(c.measured)) }));
  return routingMetadata(requested, endpoints, chosen && { model: chosen.model.id, provider: chosen.slug }, passed, Math.max(1, Date.now() - startedAt), api);
}

/** What was measured of an endpoint ranked by its measures (measures.ts): its percentiles, null when unmeasured (a failure's Infinity: null too). */
const measuredFields = (m: Measured | null) => ({ latency: m?.latency ?? null, throughput: m?.throughput ?? null });

/** The metadata fields a gateway answer carries, as the caller asked: `router_metadata`, `openrouter_metadata` or both. */
export function gatewayMetadataFields(ask: MetadataAsk, ...args: Parameters<typeof gatewayMetadata>): Record<string, unknown> {
  const meta = gatewayMetadata(...args);
  const out: Record<string, unknown> = {};
  if (ask.router) out.router_metadata = meta;
  if (ask.openrouter) out.openrouter_metadata = openrouterShape(meta, args[3]);
  return out;
}

/**
 * For a caller that opted in: each candidate's metadata fields, made when it answers (the model
 * requested, the attempts passed over by then, the time since the request came); else undefined.
 */
export function metadataFor(ask: MetadataAsk, body: Record<string, unknown>, candidates: Candidate[], passed: Attempt[], api: string): ((c: Candidate | undefined) => () => Record<string, unknown>) | undefined {
  if (!asksMetadata(ask)) return undefined;
  const chain = modelChain(body);
  const requested = chain[0] ?? candidates[0]!.model.id;
  const startedAt = Date.now();
  // In the chain's order: an id passed over before any provider was asked (candidates.ts) where the list names it,
  // and not at all when it comes after the model that answered (never reached, as the fake models' routing says).
  const at = (a: Attempt) => chain.indexOf(a.model);
  // A provider a rule passed over is named up to the model that answered, its own included.
  const reached = (c: Candidate | undefined) => (a: Attempt) => !c || (!a.unknown && !a.unasked) || at(a) < chain.indexOf(c.model.id) || (!!a.unasked && at(a) === chain.indexOf(c.model.id));
  return (c) => () => gatewayMetadataFields(ask, requested, candidates, c, passed.filter(reached(c)).sort((a, b) => at(a) - at(b)), startedAt, api);
}

/**
 * An upstream's words without the provider keys it echoed: each whole key, each start of one cut short
 * (maskKeyStarts), and the start of one where the words were cut short (a failure keeps the first 200
 * characters of a refusal). `forms`: keyFormList(), the longest first.
 */
export function keyHider(forms: readonly KeyForm[]): (text: string) => string {
  return (text) => {
    text = maskKeyStarts(text, forms);
    for (const { text: key } of forms) {
      for (let n = Math.min(key.length - 1, text.length); n >= 4; n--) {
        if (text.endsWith(key.slice(0, n))) {
          text = `${text.slice(0, -n)}[provider key]`;
          break;
        }
      }
    }
    return text;
  };
}

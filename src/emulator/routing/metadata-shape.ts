import type { Attempt } from './attempt.js';
import type { Percentiles } from './measures.js';

/** An endpoint the request could use: a model at a provider, and whether it answered. */
export interface EndpointSeen {
  model: string;
  provider: string;
  selected: boolean;
  /** Its measures, when the request ranked by them (`router_metadata` only): seconds to the first token, tokens a second. */
  latency?: Percentiles | null;
  throughput?: Percentiles | null;
}

/** Whether an attempt asked its provider: an id that names no model, or a provider a rule passed over, was never asked. */
export const askedOne = (a: Attempt) => !a.unknown && !a.unasked;

/**
 * `router_metadata`, one shape for the gateway and the fake models' routing (`api`: chat, responses…): the
 * providers asked (`attempts`, `attempt`: their count), the one that answered (`chosen`; none when every
 * candidate failed). Those never asked (an id that names no model, a provider a rule of `provider` passed
 * over) are `passed_over`, each with its reason; a provider passed over is an endpoint of the model not
 * available to the request (`endpoints.total` counts it, as the service's does).
 */
export function routingMetadata(requested: string, endpoints: EndpointSeen[], chosen: { model: string; provider: string } | undefined, passed: Attempt[], generationTime: number, api: string) {
  const asked = passed.filter(askedOne);
  const notAsked = passed.filter((a) => !askedOne(a));
  const attempt = asked.length + (chosen ? 1 : 0);
  const failed = asked.map((a) => `${a.provider} (${a.error})`).join(', ');
  const skipped = notAsked.map((a) => `${a.provider} (${a.error})`).join(', ');
  const notAskedWords = skipped ? `; passed over, not asked: ${skipped}` : '';
  const answered = chosen ? `${chosen.model} via ${chosen.provider} (attempt ${attempt})${failed ? `; failed: ${failed}` : ''}${notAskedWords}` : `every candidate failed: ${failed || 'no provider asked'}${notAskedWords}`;
  return {
    attempt,
    endpoints: { available: endpoints, total: endpoints.length + notAsked.filter((a) => a.provider !== 'none').length },
    generation_time: generationTime,
    is_byok: false,
    region: 'local',
    requested,
    strategy: attempt > 1 || (chosen !== undefined && chosen.model !== requested) ? 'fallback' : 'direct',
    summary: `${api}: ${requested} -> ${answered}`,
    attempts: [...asked.map((a) => ({ provider: a.provider, model: a.model, error: a.error, ok: false })), ...(chosen ? [{ provider: chosen.provider, model: chosen.model, ok: true }] : [])],
    passed_over: notAsked.map((a) => ({ provider: a.provider, model: a.model, reason: a.error, status: a.status ?? 400 })),
  };
}

/** The deployed shape (`openrouter_metadata`): the providers asked, each with its status (502 when none came: a timeout, a break); no words, nothing passed over. */
export function openrouterShape(meta: ReturnType<typeof routingMetadata>, passed: Attempt[]) {
  const { generation_time: _time, attempts, passed_over: _passed, ...common } = meta;
  const asked = passed.filter(askedOne);
  // The measures are router_metadata's: the OpenAPI's EndpointInfo names model, provider and selected.
  const available = common.endpoints.available.map(({ model, provider, selected }) => ({ model, provider, selected }));
  return { ...common, endpoints: { ...common.endpoints, available }, attempts: attempts.map((a, i) => ({ provider: a.provider, model: a.model, status: a.ok ? 200 : (asked[i]?.status ?? 502) })) };
}

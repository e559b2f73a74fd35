import { HttpError } from '../http/http.js';
import { allowedProviders, resolveModel } from '../http/validate.js';
import type { ModelSpec } from '../models/models.js';
import type { Attempt } from './attempt.js';
import { cheapestFirst, rulesOf, ruledOut, whyNot } from './provider-rules.js';
import type { Routed } from './routed.js';

type Body = Record<string, unknown>;
type Kind = 'chat' | 'speech' | 'embedding';
type Ruled = NonNullable<ReturnType<typeof whyNot>>;

/** An id of the models list that names no model here, and the 400's words why. */
interface Skipped {
  model: string;
  error: string;
}

/**
 * `router serve`'s own routing: walks `model` then `models` (fallback) as the gateway's candidatesFor does. An id
 * that names no model here and a provider the request's rules pass over are never asked (`passed`, as the
 * gateway names them); a model that is down is asked at each provider and fails (502, the
 * words of a gateway's fake models). The request is a 400 on the first id
 * only when none is a model; a 404 when the request's preferences leave no provider; a 502 when all are down.
 */
export function route(body: Body, kind: Kind): Routed {
  const requested = (body.model as string | undefined) ?? (Array.isArray(body.models) ? (body.models[0] as string) : undefined);
  const chain = [...new Set([requested, ...(Array.isArray(body.models) ? (body.models as string[]) : [])].filter((m): m is string => !!m))];
  const models = cheapestFirst(body, chain.length ? chain.map((id) => knownModel(id, kind)) : [resolveModel(undefined, kind, kind === 'chat' ? 'local/echo' : undefined)]);
  // None is a model here: the first one's 400, as a request naming it alone gets.
  if (models.every((m) => 'error' in m)) resolveModel(chain[0], kind);
  const rules = rulesOf(body, kind);
  const passed: Attempt[] = [];
  const endpoints: Routed['endpoints'] = [];
  const ruledAll: Ruled[] = [];
  let chosen: { model: ModelSpec; provider: string } | undefined;
  let noProvider = false;
  for (const model of models) {
    if ('error' in model) {
      // After the model that answers: never reached, so not named (as the gateway's metadataFor).
      if (!chosen) passed.push({ provider: 'none', model: model.model, error: model.error, status: 400, unknown: true });
      continue;
    }
    const ruled: Attempt[] = [];
    const qualifies = rules && ((slug: string) => {
      const not = whyNot({ slug, model: { id: model.id, upstream: model.id }, listed: { prompt: model.promptPrice, completion: model.completionPrice } }, rules, true);
      if (not) {
        ruled.push({ provider: slug, model: model.id, error: not.why, status: 404, unasked: not.rule });
        if (!chosen) ruledAll.push(not);
      }
      return !not;
    });
    const providers = allowedProviders(model, body.provider, qualifies);
    endpoints.push(...providers.map((provider) => ({ model: model.id, provider })));
    if (chosen) continue;
    passed.push(...ruled);
    if (!providers.length) noProvider = true;
    else if (model.unavailable) passed.push(...providers.map((provider) => ({ provider, model: model.id, error: `${model.id}: unavailable`, status: 502 })));
    else chosen = { model, provider: providers[0]! };
  }
  if (chosen) return { ...chosen, requested: requested ?? chosen.model.id, endpoints, passed };
  if (noProvider && ruledAll.length) throw ruledOut(ruledAll);
  if (noProvider) throw new HttpError(404, 'No endpoints found matching your provider preferences', 'not_found');
  throw new HttpError(502, 'All providers for the requested models are unavailable', 'provider_unavailable');
}

/** The model an id of the chain names, or why it names none (a 400's words). */
function knownModel(id: string, kind: Kind): ModelSpec | Skipped {
  try {
    return resolveModel(id, kind);
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) return { model: id, error: err.message };
    throw err;
  }
}

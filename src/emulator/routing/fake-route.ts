import { HttpError } from '../http/http.js';
import { inOrder, providerNames, resolveModel } from '../http/validate.js';
import type { ModelSpec } from '../models/models.js';
import { lastingStatus, type Attempt } from './attempt.js';
import { providerFault } from './provider-fault.js';
import { cheapestFirst, rulesOf, ruledOut, whyNot } from './provider-rules.js';
import { namedOut, withoutFallbacks } from './provider-choice.js';
import { allFailed } from './all-failed.js';
import { failedMetadataFields, type RouteAsk, type Routed } from './routed.js';

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
 * that names no model here and a provider the request's preferences pass over (`only`, `ignore`, `allow_fallbacks:
 * false`, a rule) are never asked (`passed`, as the gateway names them); a model that is down is asked at each
 * provider and fails (502, the words of a gateway's fake models), as is a provider a `provider=` fault names
 * (`at.fault`): the next provider is asked. The request is a 400 on the first id only when none is a model; a 404
 * when the request's preferences leave no provider; allFailed's 502 (429) when every provider asked failed, with the metadata `at.ask` opted in to.
 */
export function route(body: Body, kind: Kind, at?: RouteAsk): Routed {
  const requested = (body.model as string | undefined) ?? (Array.isArray(body.models) ? (body.models[0] as string) : undefined);
  const chain = [...new Set([requested, ...(Array.isArray(body.models) ? (body.models as string[]) : [])].filter((m): m is string => !!m))];
  const models = cheapestFirst(body, chain.length ? chain.map((id) => knownModel(id, kind)) : [resolveModel(undefined, kind, kind === 'chat' ? 'local/echo' : undefined)]);
  // None is a model here: the first one's 400, as a request naming it alone gets.
  if (models.every((m) => 'error' in m)) resolveModel(chain[0], kind);
  const named = providerNames(body.provider);
  const rules = rulesOf(body, kind);
  const passed: Attempt[] = [];
  const endpoints: Routed['endpoints'] = [];
  const ruledAll: Ruled[] = [];
  let chosen: { model: ModelSpec; provider: string } | undefined;
  for (const model of models) {
    if ('error' in model) {
      // After the model that answers: never reached, so not named (as the gateway's metadataFor).
      if (!chosen) passed.push({ provider: 'none', model: model.model, error: model.error, status: 400, unknown: true });
      continue;
    }
    const ruled: Attempt[] = [];
    const passOver = (slug: string, why: string, rule: NonNullable<Attempt['unasked']> = 'choice') => ruled.push({ provider: slug, model: model.id, error: why, status: 404, unasked: rule });
    // As the gateway's candidatesFor: those the request names out first, then those a rule passes over, then fallbacks.
    const kept = model.providers.filter((slug) => {
      const out = namedOut(slug, named);
      if (out !== undefined) passOver(slug, out, 'named');
      return out === undefined;
    });
    const qualified = rules ? kept.filter((slug) => {
      const not = whyNot({ slug, model: { id: model.id, upstream: model.id }, listed: { prompt: model.promptPrice, completion: model.completionPrice } }, rules, true);
      if (not) {
        passOver(slug, not.why, not.rule);
        if (!chosen) ruledAll.push(not);
      }
      return !not;
    }) : kept;
    const providers = withoutFallbacks(inOrder(qualified, named.order), (slug) => slug, named, passOver);
    endpoints.push(...providers.map((provider) => ({ model: model.id, provider })));
    if (chosen) continue;
    passed.push(...ruled);
    for (const provider of providers) {
      const failure = model.unavailable ? { error: `${model.id}: unavailable`, status: 502, lasting: true as const } : faultAt(at?.fault, provider);
      if (!failure) {
        chosen = { model, provider };
        break;
      }
      passed.push({ provider, model: model.id, ...failure });
    }
  }
  if (chosen) return { ...chosen, requested: requested ?? chosen.model.id, endpoints, passed };
  if (!passed.some((a) => !a.unknown && !a.unasked)) {
    if (ruledAll.length) throw ruledOut(ruledAll);
    throw new HttpError(404, 'No endpoints found matching your provider preferences', 'not_found');
  }
  throw allFailed(passed, failedMetadataFields(requested ?? chain[0]!, endpoints, passed, at));
}

/** A `provider=` fault's failure of that provider as an attempt (provider-fault.ts makes it for the gateway too), else undefined. */
function faultAt(fault: RouteAsk['fault'], provider: string): Pick<Attempt, 'error' | 'status' | 'cause' | 'retryAfter' | 'lasting'> | undefined {
  const made = providerFault(fault, provider);
  if (!made) return undefined;
  // A 401–404 is the provider's last word, as a gateway's upstream's is (metadata.ts): the 502 then says `x-should-retry: false`.
  return { error: made.words, status: made.status, cause: made.cause, ...(made.retryAfter !== undefined && { retryAfter: made.retryAfter }), ...(lastingStatus(made.status) && { lasting: true as const }) };
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

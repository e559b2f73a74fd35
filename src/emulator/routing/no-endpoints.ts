/** The 404 of a request whose provider preferences leave no candidate: what they named, and who serves the models. */
import { HttpError } from '../http/http.js';
import { candidatesFor, modelChain, type Candidate, type Catalog } from './candidates.js';
import type { Attempt } from './attempt.js';
import { ruledOut } from './provider-rules.js';

type Body = Record<string, unknown>;

const NO_ENDPOINTS = 'No endpoints found matching your provider preferences';

/** `serves`: which candidates take this endpoint (a provider without Responses does not). */
export function noEndpoints(body: Body, catalog: Catalog, kind: 'chat' | 'embedding' | 'speech', serves: (c: Candidate) => boolean = () => true): HttpError {
  const served = [...new Set(candidatesFor({ ...body, provider: undefined }, catalog, undefined, kind).filter(serves).map((c) => c.slug))];
  // The providers a rule of `provider` passed over (only, ignore and the like kept some): each named with why.
  const passed: Attempt[] = [];
  candidatesFor(body, catalog, undefined, kind, passed);
  const ruled = passed.flatMap((a) => (a.unasked && a.unasked !== 'choice' && a.unasked !== 'named' && served.includes(a.provider) ? [{ rule: a.unasked, why: a.error }] : []));
  if (ruled.length) return ruledOut(ruled);
  const chain = modelChain(body).join(', ');
  const by = served.length ? `served here by ${served.join(', ')}` : 'served here by no provider for this endpoint';
  const only = (body.provider as { only?: unknown } | null | undefined)?.only;
  const strangers = Array.isArray(only) ? only.filter((s): s is string => typeof s === 'string' && !served.includes(s)) : [];
  const why = strangers.length && !served.some((s) => (only as string[]).includes(s))
    ? `provider.only names ${strangers.join(', ')}, which ${strangers.length === 1 ? 'serves' : 'serve'} none of the models asked (${chain}: ${by})`
    : `${chain}: ${by}`;
  return new HttpError(404, `${NO_ENDPOINTS}: ${why}`, 'not_found');
}

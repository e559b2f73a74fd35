/** The candidates of a Responses request through the gateway: the providers with the Responses API. */
import { bad } from '../http/validate.js';
import { candidatesFor, type Candidate, type Catalog } from './candidates.js';
import { noEndpoints } from './no-endpoints.js';
import type { Attempt } from './attempt.js';

type Body = Record<string, unknown>;

const answers = (c: Candidate) => !!c.adapter.responses;

/**
 * The candidates that have the Responses API (`responses: true`, the fake models), in the routing's order.
 * A model of the chain that only providers without it serve is passed over as a failed one is: each of
 * them into `passed` (named in router_metadata, as an id that names no model is), and the list goes on.
 * When none is left: a 400 saying so when the chain names no model that has it (chat answers it), else
 * the 404 of provider preferences that left none.
 */
export function responsesCandidates(body: Body, catalog: Catalog, sticky: ((id: string) => string | undefined) | undefined, passed: Attempt[]): Candidate[] {
  const all = candidatesFor(body, catalog, sticky, 'chat', passed);
  const candidates = all.filter(answers);
  if (!candidates.length) {
    if (all.length && !candidatesFor({ ...body, provider: undefined }, catalog, undefined, 'chat').some(answers)) {
      bad(`${all[0]!.model.id} is served only by providers without the Responses API (none of them has responses: true); use /v1/chat/completions`);
    }
    throw noEndpoints(body, catalog, 'chat', answers);
  }
  passOverChatOnly(all, candidates, passed);
  return candidates;
}

/** Each of `all` whose model none of `candidates` serves (only providers without the Responses API do): into `passed`, named. */
export function passOverChatOnly(all: Candidate[], candidates: Candidate[], passed: Attempt[]): void {
  const served = new Set(candidates.map((c) => c.model.id));
  for (const c of all) {
    if (served.has(c.model.id)) continue;
    passed.push({ provider: c.slug, model: c.model.id, error: `${c.slug}: ${c.model.id} has no Responses API here (no responses: true); /v1/chat/completions serves it`, status: 400, unknown: true });
  }
}

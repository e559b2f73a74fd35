import { round } from '../models/models.js';
import { HttpError } from '../http/http.js';
import type { ProviderAdapter } from '../providers/types.js';
import { candidatesFor, type Candidate, type Catalog } from './candidates.js';
import { promptEstimate } from './hang-up.js';
import { passOverChatOnly } from './responses-candidates.js';
import type { Attempt } from './attempt.js';

type Body = Record<string, unknown>;

/** The batch endpoints run over providers: the models they serve, the kind, the adapter's call; Responses answers carry no provider. */
export const BATCHED: Record<string, { ids: 'upstreamIds' | 'embeddingIds' | 'responsesIds'; kind: 'chat' | 'embedding'; named: boolean; call: (a: ProviderAdapter) => ProviderAdapter['chat'] | undefined }> = {
  '/v1/chat/completions': { ids: 'upstreamIds', kind: 'chat', named: true, call: (a) => a.chat },
  '/v1/embeddings': { ids: 'embeddingIds', kind: 'embedding', named: true, call: (a) => a.embeddings },
  '/v1/responses': { ids: 'responsesIds', kind: 'chat', named: false, call: (a) => a.responses },
  // Run as the chat request it means (batch-items.ts, messages-format.ts).
  '/v1/messages': { ids: 'upstreamIds', kind: 'chat', named: true, call: (a) => a.chat },
};

/**
 * A batch request's candidates: the providers that serve its model and endpoint, in the routing's order. An id
 * that names no model, and for Responses a model only chat-only providers serve, go into `passed` (its error names them).
 */
export function batchCandidates(body: Body, endpoint: string, catalog: Catalog, passed: Attempt[] = []) {
  const how = BATCHED[endpoint];
  if (!how) throw new HttpError(400, `${endpoint} is not run over providers`);
  const asked = how.kind === 'embedding' ? body : { ...body, stream: false };
  const all = candidatesFor(asked, catalog, undefined, how.kind, passed);
  const candidates = all.filter((c) => how.call(c.adapter));
  if (endpoint === '/v1/responses' && candidates.length) passOverChatOnly(all, candidates, passed);
  return { how, asked, candidates };
}

/**
 * The most one request can cost at full price on any of its candidates, or undefined when nothing
 * bounds it: a candidate without prices (charged the upstream's own `usage.cost`), or a chat or
 * Responses request without a token limit on a model without `max_completion_tokens`. Prompt tokens
 * are bounded by the UTF-8 bytes of the whole request as JSON (a tokenizer makes at most one token
 * of each byte; the JSON's keys and quotes cover a template's own), completion tokens by the
 * request's limit and the model's own, the smaller.
 */
export function batchBound(body: Body, endpoint: string, candidates: Candidate[]): number | undefined {
  const embeddings = endpoint === '/v1/embeddings';
  const asked = embeddings ? 0 : (endpoint === '/v1/responses' ? body.max_output_tokens : (body.max_completion_tokens ?? body.max_tokens));
  if (asked !== undefined && asked !== null && (typeof asked !== 'number' || !Number.isFinite(asked) || asked < 0)) return undefined;
  if (!candidates.length) return undefined;
  // Unbounded first: the prompt's estimate serializes the whole request, for nothing when no bound is made.
  const limitOf = (c: Candidate) => Math.min(asked ?? Infinity, c.model.maxCompletionTokens ?? Infinity);
  if (candidates.some((c) => !c.model.prices || limitOf(c) === Infinity)) return undefined;
  const promptTokens = promptEstimate(body);
  let most = 0;
  for (const c of candidates) {
    const prices = c.model.prices!;
    most = Math.max(most, round(round(promptTokens * prices.prompt) + round(limitOf(c) * prices.completion)));
  }
  return most;
}

/**
 * The two shapes of the batch resource the emulator answers in: `spec` (api.md: `/v1/batches`,
 * with a listing) and `deployed` (the service as it runs: `/beta/batches`, no listing, requests
 * checked as they are submitted, `usage` null until completed, `results` only when completed).
 */
import type { BatchRecord } from '../state/batch-store.js';
import { bad, nonTextPart, type Body } from './batch-rules.js';

export const FLAVORS = ['spec', 'deployed'] as const;
export type Flavor = (typeof FLAVORS)[number];

/** Where batches are, under the API root. */
export const batchesPath = (flavor: Flavor) => (flavor === 'deployed' ? '/beta/batches' : '/v1/batches');

/** The first request that the batch cannot run: a body.model that is not the batch's, a part that is not text, embeddings options batches lack. */
export function requestProblem(record: Pick<BatchRecord, 'endpoint' | 'model'>, custom_id: string, body: Body): string | undefined {
  if (body.model !== undefined && body.model !== record.model) {
    return `request ${custom_id}: body.model ${JSON.stringify(body.model)} does not equal the batch model "${record.model}"`;
  }
  const nonText = nonTextPart(record.endpoint, body);
  if (nonText) return `request ${custom_id}: ${nonText}${record.endpoint === '/v1/embeddings' ? '' : '; batches are text only'}`;
  return undefined;
}

/** A JSON value's text with the keys of its objects in order: two equal values, one text. */
const canonical = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Body)[k])}`).join(',')}}` : JSON.stringify(v ?? null);

/**
 * The first problem of a batch's requests: one's own (requestProblem), or, for a Google model, a
 * response_format unlike the first request's ("all requests in a batch must share the same
 * response_format (absent / json_object / identical json_schema), else validation fails naming the
 * first conflicting request": deployment notes).
 */
export async function firstProblem(requests: AsyncIterable<{ custom_id: string; body: Body }>, record: Pick<BatchRecord, 'endpoint' | 'model'>): Promise<string | undefined> {
  let shared: { custom_id: string; format: string } | undefined;
  for await (const { custom_id, body } of requests) {
    const problem = requestProblem(record, custom_id, body);
    if (problem) return problem;
    if (!record.model.startsWith('google/')) continue;
    const format = canonical(body.response_format);
    shared ??= { custom_id, format };
    if (format !== shared.format) return `request ${custom_id}: its response_format differs from that of request ${shared.custom_id}; a batch of a Google model needs one response_format for all its requests`;
  }
  return undefined;
}

/** The deployed service refuses such a submission at once (400): every request of the uploaded file is checked. */
export async function refuseBadRequests(requests: AsyncIterable<{ custom_id: string; body: Body }>, record: Pick<BatchRecord, 'endpoint' | 'model'>): Promise<void> {
  const problem = await firstProblem(requests, record);
  if (problem) bad(problem);
}

/** The batch as the flavour shows it without results: the deployed service has usage null until completed, results null. */
export function shownBatch(base: Body, status: BatchRecord['status'], flavor: Flavor): Body {
  if (flavor !== 'deployed') return base;
  return { ...base, usage: status === 'completed' ? base.usage : null, results: null };
}

/**
 * A stored result line as the flavour shows it. Deployed: "exactly one of `response` / `error` is
 * non-null" (deployment notes), so a failed request's response is null; api.md's `response` is an
 * object, always (a failed request has the answer its request alone would get).
 */
export function shownResult(flavor: Flavor): ((line: string) => string) | undefined {
  if (flavor !== 'deployed') return undefined;
  return (line) => {
    if (!line.includes('"error":{')) return line;
    const item = JSON.parse(line) as Body;
    return item.error ? JSON.stringify({ ...item, response: null }) : line;
  };
}

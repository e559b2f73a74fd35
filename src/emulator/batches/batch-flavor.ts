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

/** The deployed service refuses such a submission at once (400): every request of the uploaded file is checked. */
export async function refuseBadRequests(requests: AsyncIterable<{ custom_id: string; body: Body }>, record: Pick<BatchRecord, 'endpoint' | 'model'>): Promise<void> {
  let problem: string | undefined;
  for await (const { custom_id, body } of requests) if ((problem = requestProblem(record, custom_id, body))) break;
  if (problem) bad(problem);
}

/** The batch as the flavour shows it without results: the deployed service has usage null until completed, results null. */
export function shownBatch(base: Body, status: BatchRecord['status'], flavor: Flavor): Body {
  if (flavor !== 'deployed') return base;
  return { ...base, usage: status === 'completed' ? base.usage : null, results: null };
}

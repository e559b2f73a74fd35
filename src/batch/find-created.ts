/** Finds the batch a create whose answer was lost may have made, in the service's listing. */
import type { RouterClient } from '../client/index.js';
import type { Batch } from '../client/types.js';
import { isNoListing } from '../client/resources/batches.js';

/** The newest batch the service lists: what a create's batch will be newer than. */
export type Watermark = { id: string; created_at: number } | null;

export async function newestBatch(client: RouterClient, signal?: AbortSignal): Promise<Watermark> {
  const first = (await client.batches.list({ limit: 1 }, { signal })).data[0];
  return first ? { id: first.id, created_at: first.created_at } : null;
}

/** The newest listed batch before a create; 'unlisted': the service has no listing (its lost create could never be found). */
export async function watermark(client: RouterClient, signal?: AbortSignal): Promise<Watermark | 'unlisted'> {
  if (client.batches.hasListing === false) return 'unlisted';
  try {
    return await newestBatch(client, signal);
  } catch (err) {
    if (isNoListing(err)) return 'unlisted';
    throw err;
  }
}

export interface CreatedQuery {
  /** The newest batch listed before the create was sent (null: there was none). */
  after: Watermark;
  endpoint: string;
  model: string;
  count: number;
  /** Ids known to belong to something else. */
  skip?: Set<string> | undefined;
}

/**
 * The batches a create whose answer was lost may have made: those the service lists as newer than
 * the batch that was newest before the create (its order and its clock only: this machine's clock
 * is never compared with the service's), with the create's endpoint, model and request count.
 * Newest first, as the listing gives them.
 */
export async function findCreated(client: RouterClient, q: CreatedQuery, signal?: AbortSignal): Promise<Batch[]> {
  const found: Batch[] = [];
  const query = q.after ? { created_after: q.after.created_at - 1, limit: 100 } : { limit: 100 };
  for await (const page of client.batches.listAll(query, { signal })) {
    for (const b of page.data) {
      if (b.id === q.after?.id) return found;
      if (b.endpoint === q.endpoint && b.model === q.model && b.request_counts.total === q.count && !q.skip?.has(b.id)) found.push(b);
    }
  }
  return found;
}

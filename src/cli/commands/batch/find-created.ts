import type { RouterClient } from '../../../client/index.js';
import type { Batch } from '../../../client/types.js';

export interface CreatedQuery {
  /** Unix seconds when the create began (the batch is no older). */
  since: number;
  endpoint: string;
  model: string;
  count: number;
  /** Ids known to belong to something else. */
  skip?: Set<string>;
}

/**
 * The batches a create whose answer was lost may have made: created since it began, with its
 * endpoint, model and request count. Newest first, as the listing gives them.
 */
export async function findCreated(client: RouterClient, q: CreatedQuery, signal?: AbortSignal): Promise<Batch[]> {
  const found: Batch[] = [];
  for await (const page of client.batches.listAll({ created_after: q.since - 1, limit: 100 }, { signal })) {
    for (const b of page.data) {
      if (b.endpoint === q.endpoint && b.model === q.model && b.request_counts.total === q.count && !q.skip?.has(b.id)) found.push(b);
    }
  }
  return found;
}

import type { Ctx } from '../http/http.js';
import type { BatchRecord } from '../state/batch-store.js';
import type { BatchStorage, Store } from '../state/store-api.js';
import { asCharged, publicBatch } from './batch-rules.js';
import { cuttableWriter } from '../state/billing.js';

/**
 * A batch saved by a build before results carried the batch price (stop 59): its results, written
 * again once as they were charged (asCharged), so that each item's `usage.cost` says what it cost as
 * the batch's own usage does. Results are streamed from the file as saved, unparsed, on every read.
 */
export function priceSavedResults(store: BatchStorage, kept: Store, record: BatchRecord): BatchRecord {
  if (record.priced_results) return record;
  const saved = store.completedResults(record.id);
  const charged = asCharged(kept, saved);
  if (charged.some((item, i) => item !== saved[i])) store.replaceResults(record.id, charged);
  record.priced_results = true;
  store.save(record);
  return record;
}

/** The batch object with its results, streamed from the store (results can be hundreds of MB), each line as `shown` has it. */
export async function streamWithResults(ctx: Ctx, record: BatchRecord, results: AsyncIterable<string>, shown?: (line: string) => string): Promise<void> {
  const res = ctx.res;
  const head = JSON.stringify(publicBatch(record));
  ctx.head(200, { 'content-type': 'application/json' });
  res.write(`${head.slice(0, -1)},"results":[`);
  let first = true;
  let carry = '';
  const writer = cuttableWriter(ctx, 1);
  const malformed = ctx.fault?.kind === 'malformed';
  // Leaving the loop early closes the store's reading of the results.
  for await (const chunk of results) {
    if (writer.cut) return;
    const text = carry + chunk;
    const end = text.lastIndexOf('\n');
    if (end === -1) {
      carry = text;
      continue;
    }
    carry = text.slice(end + 1);
    const lines = text.slice(0, end).split('\n').filter(Boolean);
    const body = (shown ? lines.map(shown) : lines).join(',');
    if (body && malformed) {
      // The answer ends, complete as HTTP, in the middle of an item: JSON no reader can finish.
      res.end(body.slice(0, Math.ceil(body.length / 2)));
      return;
    }
    if (body) {
      await writer.write(first ? body : `,${body}`);
      first = false;
    }
  }
  if (malformed) res.end();
  else if (!writer.cut) res.end(']}');
}

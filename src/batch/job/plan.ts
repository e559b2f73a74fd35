/**
 * Plans a job: one pass over the input checks every line as `batch create` does, hashes the file
 * and cuts it into shards (line ranges) that each respect the request and size limits.
 */
import { createHash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { invalid } from '../errors.js';
import { scanRequests, wrapperBytes } from '../scan.js';
import { newJobId, type JobRecord, type ShardRecord } from './store.js';
import { TAG_BYTES } from './shard-io.js';

export interface PlanOptions {
  endpoint?: string;
  model?: string;
  defaultModel?: string;
  provider?: JobRecord['provider'];
  maxRequests: number;
  maxBytes: number;
}

export async function planJob(file: string, opts: PlanOptions): Promise<JobRecord> {
  // The file itself, whatever name it is given by (a link, a relative path).
  const path = realpathSync(resolve(file));
  const st = statSync(path);
  const hash = createHash('sha256');
  // The wrapper is sized with the longest model name a head can carry.
  const wrapper = wrapperBytes({ endpoint: '/v1/chat/completions', model: 'x/'.padEnd(64, 'x'), completion_window: '24h', provider: opts.provider });
  const shards: ShardRecord[] = [];
  let open: ShardRecord | undefined;
  let tooLong: number | undefined;
  const onLine = (number: number, start: number, next: number, lineBytes: number) => {
    const bytes = lineBytes + TAG_BYTES;
    if (wrapper + bytes > opts.maxBytes) tooLong ??= number;
    if (!open || open.count >= opts.maxRequests || wrapper + open.bytes + bytes > opts.maxBytes) {
      open = { index: shards.length, first_line: number, last_line: number, start, end: next, count: 0, bytes: 0 };
      shards.push(open);
    }
    open.last_line = number;
    open.end = next;
    open.count++;
    open.bytes += bytes;
  };
  const scan = await scanRequests(path, file, { endpoint: opts.endpoint, model: opts.model, maxRequests: Infinity, maxBytes: Infinity, maxLineBytes: opts.maxBytes, onRead: (bytes) => hash.update(bytes), onLine });
  if (tooLong !== undefined) throw invalid(`${file}:${tooLong}: one request is larger than a whole batch may be (${opts.maxBytes} bytes)`);
  const model = scan.model ?? opts.defaultModel;
  if (!model) throw invalid('no model: the bodies name none; give model (or defaultModel)', { about: 'no_model' });
  for (const s of shards) s.bytes += wrapper - 1;
  const now = Math.floor(Date.now() / 1000);
  return {
    id: newJobId(),
    created_at: now,
    updated_at: now,
    input: { path, size: st.size, mtime_ms: st.mtimeMs, sha256: hash.digest('hex') },
    endpoint: scan.endpoint,
    model,
    ...(opts.provider ? { provider: opts.provider } : {}),
    plain: scan.plain,
    max_requests: opts.maxRequests,
    max_bytes: opts.maxBytes,
    wrapper_bytes: wrapper,
    requests: scan.count,
    shards,
    tagged: true,
  };
}

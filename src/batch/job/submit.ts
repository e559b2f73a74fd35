/**
 * Submits a job's shards, one create at a time, each exactly once: the record says "submitting"
 * before the create is sent and holds the batch id after. A create whose fate is unknown (the
 * answer was lost, or the CLI was killed) is reconciled with the listing before anything is sent
 * again, and a batch found there is taken only when its results can prove it is the create's.
 */
import type { RouterClient } from '../../client/index.js';
import { APIError, ConnectionError } from '../../client/errors.js';
import { isTerminalBatchStatus } from '../../client/facts.js';
import type { Batch } from '../../client/types.js';
import { sleep } from '../../internal/sleep.js';
import { indexBatch } from '../local-index.js';
import { BatchError } from '../errors.js';
import { findCreated, watermark } from '../find-created.js';
import { newTag, shardRequests, untaggedResult } from './shard-io.js';
import { isFinished, listJobs, saveJob, type JobRecord, type ShardRecord } from './store.js';

export interface SubmitContext {
  /** Status lines: a batch found after a lost create, a create tried again. */
  info: (text: string) => void;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  client: RouterClient;
  /** Send again, knowingly, a shard whose create's answer was lost where the service has no listing. */
  resubmitLost?: boolean;
}

/** A 4xx is the service's refusal: nothing was created. Anything else may have created the batch. */
const definite = (err: unknown) => err instanceof APIError && err.status >= 400 && err.status < 500;

type Seen = Pick<Batch, 'id' | 'status' | 'request_counts' | 'usage'> & { created_at?: number };

/** The shard's batch is `b`; `unproven`: found in the listing, its results have yet to show it is the create's. */
export function adopt(shard: ShardRecord, b: Seen, unproven = false): void {
  shard.batch_id = b.id;
  if (shard.submitting?.tag) shard.tag = shard.submitting.tag;
  if (b.created_at !== undefined) shard.created_at = b.created_at;
  // An unproven shard keeps what its create was: shown not its own, it is looked for again.
  if (unproven) shard.unproven = true;
  else delete shard.submitting;
  delete shard.submitting_since;
  track(shard, b);
}

export function track(shard: ShardRecord, b: Pick<Batch, 'status' | 'request_counts' | 'usage'>): void {
  shard.status = b.status;
  shard.request_counts = { ...b.request_counts };
  const u = (b.usage ?? undefined) as ShardRecord['usage'];
  if (u) shard.usage = { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens, cost: u.cost };
}

/** What the results of batch `id` say of the create tagged `tag` (one result is enough; none: unknown). */
async function resultsShow(client: RouterClient, id: string, tag: string, signal: AbortSignal): Promise<'ours' | 'not ours' | 'unknown'> {
  let verdict: 'ours' | 'not ours' | 'unknown' = 'unknown';
  const seen = new Error('seen');
  try {
    await client.batches.getStreaming(id, (json) => {
      verdict = untaggedResult(json, tag) ? 'ours' : 'not ours';
      throw seen;
    }, { signal });
  } catch (err) {
    if (err !== seen) throw err;
  }
  return verdict;
}

/**
 * The batch a lost create made, if any: among the batches listed as newer than the newest one
 * before the create, with the shard's shape and not any job's, the one whose results carry the
 * create's tag. One that has not ended cannot show it yet: a single such batch is taken,
 * unproven (proven or set aside once it ends); two or more stop the run (exit 8).
 */
async function reconcile(c: SubmitContext, job: JobRecord, shard: ShardRecord): Promise<Batch | undefined> {
  const { tag, after } = shard.submitting ?? { after: null };
  const claimed = new Set<string>(job.foreign);
  for (const s of [...listJobs(c.env).flatMap((j) => j.shards), ...job.shards]) if (s.batch_id) claimed.add(s.batch_id);
  const open: Batch[] = [];
  for (const b of await findCreated(c.client, { after, endpoint: job.endpoint, model: job.model, count: shard.count, skip: claimed }, c.signal)) {
    const verdict = tag && isTerminalBatchStatus(b.status) ? await resultsShow(c.client, b.id, tag, c.signal) : 'unknown';
    if (verdict === 'ours') {
      adopt(shard, b);
      return b;
    }
    if (verdict === 'not ours') (job.foreign ??= []).push(b.id);
    else open.push(b);
  }
  if (open.length > 1) {
    saveJob(c.env, job);
    const matches = open.map((b) => b.id);
    throw new BatchError(`shard ${shard.index + 1} of ${job.id}: the answer to its create was lost, and ${open.length} batches match it: ${matches.join(', ')}. Its own is known by its results once it has ended: take the job up again then (resume: ${job.id})`, 'network', undefined, { about: 'lost_create', job: job.id, shard: shard.index + 1, matches });
  }
  if (open[0]) adopt(shard, open[0], !!tag);
  return open[0];
}

/**
 * Shards whose batch was found after a lost create and has ended: its results prove it the
 * shard's, or show it is not (it is set aside, the shard is looked for again on the next run, and
 * this run stops: exit 8). A batch that ended with no results has nothing to merge either way.
 */
export async function proveAdopted(c: SubmitContext, job: JobRecord): Promise<void> {
  for (const s of job.shards) {
    if (!s.unproven || !s.tag || !s.batch_id || !isFinished(s)) continue;
    const verdict = await resultsShow(c.client, s.batch_id, s.tag, c.signal);
    if (verdict === 'unknown') continue;
    const id = s.batch_id;
    if (verdict === 'ours') {
      delete s.unproven;
      delete s.submitting;
    } else {
      (job.foreign ??= []).push(id);
      for (const k of ['batch_id', 'tag', 'unproven', 'status', 'request_counts', 'usage', 'created_at'] as const) delete s[k];
    }
    saveJob(c.env, job);
    if (verdict === 'not ours') throw new BatchError(`shard ${s.index + 1} of ${job.id}: ${id}, taken for it after its create's answer was lost, is not its batch (its results carry other ids); it is set aside, and resuming ${job.id} looks for the shard's batch again`, 'network', undefined, { about: 'not_its_batch', job: job.id, shard: s.index + 1, batch: id });
  }
}

/**
 * A shard whose create's answer was lost where nothing lists batches: its batch, if one was made,
 * can never be found and proven its own, so it is never sent again on its own (exit 8); the caller
 * may send it again knowingly (`resubmitLost`), at the risk of a second batch billed.
 */
function lostUnlisted(c: SubmitContext, job: JobRecord, shard: ShardRecord): void {
  const sent = shard.submitting!.sent_at ?? 'an unknown time';
  const lines = `lines ${shard.first_line}-${shard.last_line}`;
  if (c.resubmitLost) {
    c.info(`shard ${shard.index + 1}: its create of ${sent} was lost; sent again as asked (if that create made a batch, it is billed too)`);
    delete shard.submitting;
    saveJob(c.env, job);
    return;
  }
  throw new BatchError(
    `shard ${shard.index + 1} of ${job.id} (${lines}): the answer to its create, sent at ${sent}, was lost, and this service has no batch listing to find its batch by. It is not sent again on its own: if no batch was made, send it again knowingly (it may be billed twice) with resume and resubmitLost`,
    'network',
    undefined,
    { about: 'lost_unlisted', job: job.id, shard: shard.index + 1, sent_at: sent, lines },
  );
}

async function submitOne(c: SubmitContext, job: JobRecord, shard: ShardRecord): Promise<void> {
  const head = { endpoint: job.endpoint, model: job.model, completion_window: '24h' as const, ...(job.provider ? { provider: job.provider } : {}) };
  for (let attempt = 1; ; attempt++) {
    if (shard.submitting?.unlisted) lostUnlisted(c, job, shard);
    if (shard.submitting || shard.submitting_since !== undefined) {
      const found = await reconcile(c, job, shard);
      saveJob(c.env, job);
      if (found) {
        c.info(`shard ${shard.index + 1}: found its batch ${found.id} (the answer to its create was lost)${shard.unproven ? '; its results will show it is its own' : ''}`);
        return;
      }
    }
    const tag = job.tagged ? newTag() : undefined;
    const after = await watermark(c.client, c.signal);
    // Stopped before the create is sent: nothing to look for (nor, without a listing, to stop on).
    c.signal.throwIfAborted();
    const sent_at = new Date().toISOString();
    shard.submitting = after === 'unlisted' ? { ...(tag ? { tag } : {}), after: null, unlisted: true, sent_at } : { ...(tag ? { tag } : {}), after: after && { id: after.id, created_at: after.created_at }, sent_at };
    delete shard.submitting_since;
    saveJob(c.env, job);
    try {
      const made = await c.client.batches.createStreaming(head, shardRequests(job, shard, tag), { signal: c.signal });
      adopt(shard, made);
      saveJob(c.env, job);
      indexBatch(c.env, c.client.core.apiRoot, made, job.input.path);
      return;
    } catch (err) {
      if (c.signal.aborted) throw err;
      // Never delivered where nothing lists batches: nothing was made, so nothing is to be looked for.
      if (shard.submitting?.unlisted && err instanceof ConnectionError && !err.maybeDelivered) {
        delete shard.submitting;
        saveJob(c.env, job);
      }
      if (definite(err)) {
        delete shard.submitting;
        saveJob(c.env, job);
        throw err;
      }
      if (attempt >= 4) throw err;
      c.info(`shard ${shard.index + 1}: ${(err as Error).message}; checking whether its batch was created`);
      await sleep(500 * 2 ** attempt, c.signal);
    }
  }
}

/** Submits every shard that has no batch yet, in order. */
export async function submitShards(c: SubmitContext, job: JobRecord, onSubmitted: (shard: ShardRecord) => void): Promise<void> {
  for (const shard of job.shards) {
    if (shard.batch_id) continue;
    await submitOne(c, job, shard);
    onSubmitted(shard);
  }
}

import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { TERMINAL, type BatchRecord, type BatchStatus } from '../state/batch-store.js';
import type { BatchStorage, Store } from '../state/store-api.js';
import { chargeable } from '../state/billing.js';
import { BATCH_ENDPOINTS, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, RETENTION_SECONDS, WINDOW_SECONDS, asCharged, checkBatchFields, countItem, emptyUsage, finishUsage, newBatchId, publicBatch, recount, chargeKey, settled } from './batch-rules.js';
import { concurrencyOf, executeItem, keepBatchGeneration, keptFault, type BatchServed } from './batch-items.js';
import { countOnKey, creditsRanOut, HeldCredits, resultsOwed, keyHash, owesRelease, releaseIfEnded, releaseUnsent, sentCount, type Unsent } from './batch-credits.js';
import { inPool } from './batch-pool.js';
import type { BatchGateway } from '../providers/types.js';
import { receiveRequests } from './batch-upload.js';
import { listBatches } from './batch-list.js';
import { priceSavedResults, streamWithResults } from './batch-results.js';
import { defineRoutes } from '../http/routes.js';
import { reportStorage, storageFailure } from '../state/storage-failure.js';
import { batchesPath, firstProblem, refuseBadRequests, shownBatch, shownResult, type Flavor } from './batch-flavor.js';

export { BATCH_ENDPOINTS, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, publicBatch };

export interface BatchEngineOptions {
  /** Pause before each request (and each state change), so that tests can watch the states. */
  delayMs: number;
  /** Upstream models (`router serve --providers`): their batches' requests go through it. */
  gateway?: BatchGateway;
  /** The shape the batch resource answers in (default spec: api.md's). */
  flavor?: Flavor;
}

export class BatchEngine {
  readonly store: BatchStorage;
  private readonly running = new Set<string>();
  private stopped = false;
  diskWaits = 0; // times a batch met a disk that takes no more and waits to be driven again (a test waits for one)

  constructor(
    private readonly state: Store,
    readonly opts: BatchEngineOptions,
  ) {
    this.store = state.batches;
  }

  get flavor(): Flavor {
    return this.opts.flavor ?? 'spec';
  }

  /** The batch as this flavour shows it without its results. */
  private shown(record: BatchRecord): Record<string, unknown> {
    return shownBatch(publicBatch(record), record.status, this.flavor);
  }

  now(): number {
    return Math.floor(this.state.now() / 1000);
  }

  resumeAll(): void {
    // Charge keys of batches that had ended before this start (an older emulator kept them all).
    this.state.forgetCharges(this.store.all().filter(settled).map(chargeKey));
    // Also a held batch that ended before its holds were let go (a crash between the two), to let them go.
    for (const r of this.store.all()) if (!TERMINAL.includes(r.status) || owesRelease(r)) this.run(r.id);
  }

  stop(): void {
    this.stopped = true;
  }

  async create(ctx: Ctx): Promise<void> {
    const declared = Number(ctx.header('content-length') ?? 0);
    if (declared > MAX_BATCH_BYTES) throw new HttpError(413, 'Batch input larger than 200 MB', 'payload_too_large');
    chargeable(ctx);
    const id = newBatchId();
    const upload = this.store.upload(id);
    let size = 0;
    try {
      const received = await receiveRequests(ctx, upload);
      size = received.size;
      const fields = checkBatchFields(received.rest, this.opts.gateway);
      upload.finish();
      if (this.flavor === 'deployed') await refuseBadRequests(upload.requests(), fields);
      const record: BatchRecord = {
        id,
        workspace: ctx.workspace, key_hash: keyHash(ctx.key.key),
        ...fields,
        completion_window: '24h',
        created_at: this.now(),
        finalized_at: null,
        status: 'validating',
        request_counts: { total: received.elements, completed: 0, failed: 0 },
        error: null,
        usage: null,
        payment_due: null,
        results_deleted: false, priced_results: true, ...keptFault(ctx.fault),
        ...(this.opts.gateway?.serves(fields.model, fields.endpoint) ? { held: true } : {}),
      };
      this.store.commit(record, upload);
      ctx.send(202, this.shown(record));
      this.run(id);
    } catch (err) {
      upload.discard();
      size = (err as { size?: number }).size ?? size;
      if (err instanceof HttpError && (err.status === 413 || size < declared)) {
        // Answer without reading the rest of a body we refuse.
        ctx.res.setHeader('connection', 'close');
      }
      throw err;
    }
  }

  list(ctx: Ctx): void {
    listBatches(ctx, this.store.newestFirst(ctx.workspace), (id) => this.store.get(id));
  }

  async get(ctx: Ctx): Promise<void> {
    const record = this.store.get(ctx.params.id!);
    if (!record || record.workspace !== ctx.workspace) throw new HttpError(404, `No batch found with id ${ctx.params.id}`, 'not_found');
    if (this.now() - record.created_at >= RETENTION_SECONDS) {
      if (!record.results_deleted) this.store.deleteResults(record);
      throw new HttpError(410, `The results of batch ${record.id} were deleted 30 days after it was created`, 'not_found');
    }
    this.expireIfLate(record);
    const terminal = TERMINAL.includes(record.status);
    if (terminal && record.payment_due !== null) {
      if (ctx.store.balance(record.workspace) >= record.payment_due) {
        if (ctx.store.debitOnce(record.workspace, record.payment_due, chargeKey(record))) countOnKey(ctx.store, record, record.payment_due);
        record.payment_due = null;
        this.saveRecord(record);
      } else {
        // The batch metadata with results null; its `error` has the envelope's {code: 402, message}
        // (the batch's own reason, if it has one, is the message).
        const message = record.error?.message ?? resultsOwed(record.id, record.payment_due, ctx.store.balance(record.workspace));
        ctx.send(402, { ...this.shown(record), error: { code: 402, message }, results: null });
        return;
      }
    }
    // The deployed service has results only for a completed batch.
    if (!terminal || (this.flavor === 'deployed' && record.status !== 'completed')) {
      ctx.send(200, this.shown(record));
      return;
    }
    await streamWithResults(ctx, priceSavedResults(this.store, this.state, record), this.store.results(record.id), shownResult(this.flavor));
  }

  private expireIfLate(record: BatchRecord): void {
    if (!TERMINAL.includes(record.status) && this.now() - record.created_at > WINDOW_SECONDS) {
      this.settle(record);
      record.status = 'expired';
      record.finalized_at = this.now();
      record.error = { message: 'The batch did not complete within the 24h completion window' };
      this.saveRecord(record);
    }
  }

  /**
   * The usage and the charge of a batch that ends without finishing (expired, or failed while it
   * ran): its completed requests, at the batch price, charged once; one that failed validation ran
   * none, so its usage is zero. The charge is keyed by batch id, as for a completed batch.
   */
  private settle(record: BatchRecord): void {
    record.usage = finishUsage(recount(record, asCharged(this.state, this.store.completedResults(record.id))));
    record.payment_due = this.charge(record);
  }

  /**
   * Charges a batch that ended its usage cost, once: keyed by batch id, so a crash before its status
   * is saved charges nothing twice. Returns what is still owed when the balance does not cover it.
   */
  private charge(record: BatchRecord): number | null {
    const cost = record.usage?.cost ?? 0;
    const key = chargeKey(record);
    // A batch over providers paid each request as it was answered.
    if (cost <= 0 || record.held) return null;
    if (!this.state.charged(key) && this.state.balance(record.workspace) < cost) return cost;
    if (this.state.debitOnce(record.workspace, cost, key)) countOnKey(this.state, record, cost);
    return null;
  }

  private sleep(): Promise<void> {
    // Unref'd: a pending pause must not keep a stopping emulator alive.
    return new Promise((r) => setTimeout(r, this.opts.delayMs).unref());
  }

  private transition(record: BatchRecord, status: BatchStatus, patch: Partial<BatchRecord> = {}): void {
    // A stopped engine (the emulator closed) writes nothing more: its state folder may be gone.
    if (this.stopped) return;
    Object.assign(record, patch, { status });
    if (TERMINAL.includes(status)) record.finalized_at = this.now();
    this.saveRecord(record);
  }

  /** Saves a batch's record; once it says the batch ended and owes nothing, its charge key is forgotten. */
  private saveRecord(record: BatchRecord): void {
    this.store.save(record);
    if (settled(record)) this.state.forgetCharges([chargeKey(record)]);
  }

  /** Drives one batch to a terminal status; safe to call again after a restart. */
  run(id: string): void {
    if (this.running.has(id)) return;
    this.running.add(id);
    const waitForDisk = (err: unknown) => {
      const why = storageFailure(err);
      if (!why) throw err;
      // Its state cannot be written: the batch waits, as over a restart, and is driven again.
      reportStorage(why, 'batches wait and go on once it can');
      this.diskWaits++;
      setTimeout(() => this.stopped || this.run(id), 1000).unref();
    };
    this.drive(id)
      .catch((err: unknown) => {
        if (storageFailure(err)) throw err;
        const record = this.store.get(id);
        if (!record || this.stopped) return;
        this.settle(record);
        this.transition(record, 'failed', { error: { message: `internal error: ${(err as Error).message}` } });
      })
      .then(() => releaseIfEnded(this.state, id, () => this.stopped))
      .catch(waitForDisk)
      .finally(() => this.running.delete(id));
  }

  private async drive(id: string): Promise<void> {
    const record = this.store.get(id)!;
    if (record.status === 'validating') {
      await this.sleep();
      if (this.stopped) return;
      const problem = await this.validateRequests(record);
      if (this.stopped) return;
      if (problem) return this.transition(record, 'failed', { error: { message: problem }, usage: finishUsage(emptyUsage()) });
      this.transition(record, 'in_progress');
    }
    if (record.status === 'in_progress') {
      const done = asCharged(this.state, this.store.completedResults(id));
      const answered = new Map(done.map((r) => [r.custom_id as string, r]));
      const usage = recount(record, done);
      const writer = this.store.openResults(id);
      const credits = record.held && this.opts.gateway ? new HeldCredits(this.state, record, this.opts.gateway) : undefined;
      let short: Unsent | false = false;
      try {
        await inPool(this.store.requests(id), concurrencyOf(record, this.opts.gateway), async (req) => {
          if (answered.has(req.custom_id)) {
            // Answered before a restart: its hold, if the crash left one, is settled now.
            credits?.settle(req.custom_id, answered.get(req.custom_id));
            return true;
          }
          if (this.opts.delayMs) await this.sleep();
          if (this.stopped || short) return false;
          this.expireIfLate(record);
          if ((record.status as BatchStatus) === 'expired') return false;
          if ((short = credits?.hold(req.custom_id, req.body) || false)) return false;
          const served: BatchServed & { startedAt: number } = { startedAt: this.state.now() };
          const item = await executeItem(record, req.custom_id, req.body, this.now(), this.opts.gateway, served);
          if (this.stopped) return false; // its upstream was let go: the item may be that failure; a restart asks again
          writer.append(item);
          keepBatchGeneration(this.state, record, req.body, item, served, !!this.opts.gateway?.serves(record.model, record.endpoint));
          answered.set(req.custom_id, item);
          credits?.settle(req.custom_id, item);
          countItem(record, item, usage);
          record.usage = finishUsage(usage); // the aggregate so far (in memory; a restart counts it afresh)
          return true;
        });
        const add = (item: Record<string, unknown>) => {
          writer.append(item);
          countItem(record, item, usage);
        };
        // Stopped short: each request not sent is a failed item (any hold a crash left is given back).
        if (credits && short && !this.stopped) await releaseUnsent(this.store.requests(id), answered, credits, record.endpoint, add, short);
        if (short && !this.stopped) return this.transition(record, 'failed', { error: creditsRanOut(record, sentCount(answered), short, credits?.keyLimitWords(), credits?.shortBy), usage: finishUsage(usage), payment_due: null });
      } finally {
        writer.close();
        credits?.close();
      }
      if (this.stopped || (record.status as BatchStatus) === 'expired') return;
      this.transition(record, 'finalizing', { usage: finishUsage(usage) });
      await this.sleep();
    }
    if (record.status === 'finalizing') this.transition(record, 'completed', { payment_due: this.charge(record) });
  }

  /** The checks a batch gets while `validating`: the first problem fails the whole batch. */
  private validateRequests(record: BatchRecord): Promise<string | undefined> {
    return firstProblem(this.store.requests(record.id), record);
  }
}

/**
 * The batch resource: create (the body streamed to disk), list, and get (with results once it
 * ended). Deployed: under /beta/batches and no listing (GET there is a 405).
 */
export const batchRoutes = defineRoutes(({ batches }: { batches: BatchEngine }) => {
  const path = batchesPath(batches.flavor);
  return [
    { method: 'POST', path, access: 'any', handler: (ctx) => batches.create(ctx) },
    ...(batches.flavor === 'deployed' ? [] : [{ method: 'GET' as const, path, access: 'any' as const, handler: async (ctx: Ctx) => batches.list(ctx) }]),
    { method: 'GET', path: `${path}/:id`, access: 'any', handler: (ctx) => batches.get(ctx) },
  ];
});

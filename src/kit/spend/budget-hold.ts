/**
 * Holds on the budgets. A call under daily_budget or monthly_budget holds its cost bound in the
 * state folder's `budget-holds/` from the check that lets it go until its cost is in the usage
 * ledger: concurrent `router` processes never let go together more than a budget has left. The
 * check and the hold are made under one lock (`budget-holds/.lock`). The hold of a process that
 * is gone (kill -9; its id now another process's), or older than a day, is stale: the next check
 * removes it, writing to the ledger the bound of a call killed before its cost was known
 * (hold-record.ts). While a budget is in force, a call that cannot be held and recorded (a state folder
 * read-only or full) is refused: sent, it would spend beside the budget, unseen by other calls.
 */
import { closeSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { processStart } from '../../internal/process.js';
import { randomHex } from '../../internal/random-hex.js';
import { appendUsage, batchHoldPath, ledgerPath, type UsageRecord } from './ledger.js';
import { budgetUnkept, holdsDir } from './budget-lock.js';
import { describeCode } from '../../internal/system-errors.js';
import { BATCH_HOLD_MAX_AGE_MS, HOLD_MAX_AGE_MS, UNRECORDED, UNSETTLED, boundCost, isStale, orphaned, unsettledLine, type HoldCall, type HoldRecord } from './hold-record.js';
import { keepUnheard, type SentCreate } from './sent-create.js';

export { BATCH_HOLD_MAX_AGE_MS, HOLD_MAX_AGE_MS, isStale, type HoldCall, type HoldRecord };
export { budgetUnkept, holdNames, holdsChange, holdsDir, withBudgetLock } from './budget-lock.js';
export { heldByOthers, type Held } from './held-by-others.js';

function rmQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Not there to remove.
  }
}

/**
 * One call's hold: placed under the lock; lessened by what the ledger has of it; released when the
 * command ends. It sets no process-wide hook: a hold whose process is gone is stale all the same (a
 * program that wants it removed at exit overrides `placed` and `unplaced`, as the CLI does).
 */
export class BudgetHold {
  readonly path: string;
  private readonly rec: HoldRecord;
  private written = false;
  readonly #env: NodeJS.ProcessEnv;

  /** `ignoreBudget`: how a refusal (a BudgetUnkept) names the way past the budgets. */
  constructor(env: NodeJS.ProcessEnv, profile: string, usd: number, call: HoldCall = {}, ignoreBudget?: string) {
    this.#env = env;
    this.path = join(holdsDir(env), `${process.pid}-${randomHex(6)}.json`);
    this.rec = { profile, usd, pid: process.pid, started: processStart(process.pid), time: new Date().toISOString(), ...call };
    try {
      writeFileSync(this.path, JSON.stringify(this.rec), { flag: 'wx', mode: 0o600 });
      this.written = true;
    } catch (err) {
      // Made, then not written (a full disk): an empty file no check needs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') rmQuietly(this.path);
      throw budgetUnkept(this.path, err, ignoreBudget);
    }
    this.placed();
    // The call's cost goes to the ledger: one that cannot be opened to append would leave it unseen.
    const ledger = ledgerPath(env);
    try {
      closeSync(openSync(ledger, 'a', 0o600));
    } catch (err) {
      this.release();
      throw budgetUnkept(ledger, err, ignoreBudget);
    }
  }

  get usd(): number {
    return this.rec.usd;
  }

  /**
   * Holds `usd` from now on (a further call of the command). Written whole: a reader sees the old or the new. `since`: when
   * the one call now held for is sent (none other under way), the start of the time a killed one's line is settled by.
   */
  set(usd: number, settled = false, since?: string): void {
    this.rec.usd = Math.max(0, usd);
    if (since) this.rec.since = since;
    if (settled) this.rec.settled = true;
    else delete this.rec.settled;
    // A call logged, or a further one held for: the id said no longer names a call under way.
    delete this.rec.id;
    delete this.rec.endpoint;
    this.write();
  }

  /** The answer of the call held for began: its generation `id` (the first chunk's, or an answer header's) is kept in the hold, so that the line a kill leaves (hold-record.ts) can be reconciled. */
  answering(id: string, endpoint: string): void {
    if (this.rec.id === id || this.settled) return;
    this.rec.id = id;
    this.rec.endpoint = endpoint;
    this.write();
  }

  /** A batch create's request goes now, its record written (sent-create.ts): if it ends unanswered, this hold is kept, as its batch may exist. */
  sending(sent: SentCreate): void {
    this.rec.sent = sent;
    this.write();
  }

  private write(): void {
    if (!this.written) return;
    const part = `${this.path.slice(0, -'.json'.length)}.part`;
    try {
      writeFileSync(part, JSON.stringify(this.rec), { mode: 0o600 });
      renameSync(part, this.path);
    } catch {
      // Unchanged: the hold is larger than it need be, never smaller.
    }
  }

  /**
   * The call made a batch: its bound is held beyond this process, until the batch's cost is in the ledger (a `batch get` or a watch that
   * sees it end), in a file of the batch's own. Never throws (the batch exists): where that file cannot be written (a full disk), this
   * hold's own file is renamed to it, which takes no room; undefined, or why neither could be done.
   */
  toBatch(env: NodeJS.ProcessEnv, batchId: string): string | undefined {
    delete this.rec.sent;
    const why = this.share(env, batchId, this.rec.usd);
    if (why && this.written) {
      try {
        renameSync(this.path, batchHoldPath(env, batchId));
        this.written = false;
        this.release();
        return undefined;
      } catch {
        // Said as the write's failure.
      }
    }
    this.release();
    return why;
  }

  /**
   * `usd` of this hold moved to a batch it made (a shard of `batch run`): held in the batch's own
   * file, as toBatch does, and no longer here. Undefined, or why it could not be (it then stays here).
   */
  share(env: NodeJS.ProcessEnv, batchId: string, usd: number): string | undefined {
    const path = batchHoldPath(env, batchId);
    try {
      // The key it was sent with, and since when: a batch that ended naming no cost is settled by that key's spend (reconcile-batch.ts).
      const by = { ...(this.rec.key_hash ? { key_hash: this.rec.key_hash } : {}), ...(this.rec.api_root ? { api_root: this.rec.api_root } : {}), sent_after: this.rec.since ?? this.rec.time };
      // Renamed into place: another process's check (under the lock, which this write is not) never reads it half-written.
      writeFileSync(`${path}.part`, JSON.stringify({ profile: this.rec.profile, usd, batch_id: batchId, time: new Date().toISOString(), ...by }), { mode: 0o600 });
      renameSync(`${path}.part`, path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      return `the budgets do not hold batch ${batchId} past this run: ${path} cannot be written (${code ? describeCode(code) : (err as Error).message})`;
    }
    this.set(this.rec.usd - usd);
    return undefined;
  }

  /**
   * A call's cost that the ledger could not take (a full disk): unseen there, it would let the budgets spend it again. What it cost (its
   * bound, when not known) is held instead, past this process, for a day: this hold's file is renamed, which takes no room. Whether it is held so.
   */
  unrecorded(cost: number | undefined): boolean {
    if (!this.written) return false;
    if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 && cost < this.rec.usd) this.set(cost);
    try {
      renameSync(this.path, join(dirname(this.path), `${UNRECORDED}${basename(this.path)}`));
    } catch {
      return false;
    }
    this.written = false;
    return true;
  }

  /** The cost a ledger line gives a call under way whose answer said none: its bound, until reconciled. */
  get unknownCost(): { cost: number; unsettled: string } {
    return { cost: boundCost(this.rec.usd), unsettled: UNSETTLED };
  }

  /** Whether the call held for has its cost (or a line saying it has none) in the ledger: nothing of it is under way. */
  get settled(): boolean {
    return !!(this.rec.settled || this.rec.batch);
  }

  /** A ledger line of the call held for: where its answer said no cost, the bound (`unsettled`), until reconciled. A batch's line is as given. */
  priced<R extends { cost?: number | undefined; batch_id?: string | undefined }>(record: R): R {
    // The key's hash (a hold's, under a budget) names whose spend the line is: usage --reconcile counts it out of that key's.
    const line = this.rec.key_hash ? { ...record, key_hash: this.rec.key_hash } : record;
    return record.cost === undefined && !record.batch_id && !this.settled && this.rec.usd > 0 ? { ...line, ...this.unknownCost } : line;
  }

  /**
   * The call held for failed with `err`, or was `stopped` (Ctrl-C, an answer stopped) while it ran: where the service may have carried
   * it out (`maybeDelivered`: its answer lost, cut or timed out) and no ledger line says what it cost, its bound is counted (countUnknown).
   */
  failed(err: unknown, stopped = false): boolean {
    if (this.settled || !(stopped || (err as { maybeDelivered?: unknown } | undefined)?.maybeDelivered === true)) return false;
    this.countUnknown();
    return true;
  }

  /**
   * The call failed where the service may have carried it out (its answer lost, cut or timed out, or Ctrl-C while it ran), and no ledger
   * line says what it cost: its bound goes to the ledger as a process killed then would leave it (hold-record.ts), and the hold is released.
   */
  countUnknown(): void {
    if (this.written) orphaned(this.#env, this.path, this.rec, Date.now(), false);
    this.release();
  }

  /**
   * One of several calls held for together failed as countUnknown() says, the others still under way: `usd`
   * (its bound) goes to the ledger and the hold keeps `left` for them. Whether the line was written (if not, it stays held).
   */
  countUnknownOf(usd: number, left: number): boolean {
    const { id: _id, endpoint: _endpoint, ...rec } = this.rec;
    if (usd > 0 && appendUsage(this.#env, unsettledLine({ ...rec, usd })) !== undefined) return false;
    this.set(left);
    return true;
  }

  /**
   * The ledger line of a call abandoned while it may still run (SpendGuard.abandon()), checked at `since`: its bound, unsettled, as a killed
   * call's (`held-…`, sent between `since` and now, with its key's hash): `usage --reconcile` settles it by that key's spend an hour after,
   * and its late ending takes it back by that id.
   */
  abandonedLine(usd: number, since: string): UsageRecord & { id: string; cost: number; unsettled: string } {
    const { id: _id, endpoint: _endpoint, ...rec } = this.rec;
    const line = unsettledLine({ ...rec, usd, since });
    return { ...line, time: new Date().toISOString(), id: line.id! };
  }

  /** Whether the hold is still placed: not released, nor moved to a batch or kept past the process. */
  get live(): boolean {
    return this.written;
  }

  /** A call's cost is in the ledger now: it is no longer held. */
  spent(cost: number | undefined): void {
    this.set(typeof cost === 'number' && Number.isFinite(cost) && cost > 0 ? this.rec.usd - cost : this.rec.usd, true);
  }

  /** Called once the hold is written (and before its ledger is checked). */
  protected placed(): void {}

  /** Called as the hold is released. */
  protected unplaced(): void {}

  readonly release = (): void => {
    this.unplaced();
    // A sent batch create whose answer was never heard (Ctrl-C, the answer lost): its batch may exist, so its bound stays held.
    const kept = this.written && this.rec.sent !== undefined && keepUnheard(this.#env, this.path, this.rec);
    // A later set() (a cost logged after) must not write it again.
    this.written = false;
    if (kept) return;
    try {
      rmSync(this.path, { force: true });
    } catch {
      // Never written (a state folder that cannot be written), or no longer there to remove.
    }
  };
}


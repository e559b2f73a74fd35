import { round } from '../models/models.js';
import { TERMINAL, type BatchRecord } from '../state/batch-store.js';
import type { BatchStorage, ClockStore, CreditStore, GenerationStore, KeyRecord, KeyStore } from '../state/store-api.js';
import { keyHash, limitRemaining } from '../state/key-usage.js';
import type { BatchGateway } from '../providers/types.js';
import { asCharged, BATCH_DISCOUNT, itemCharge, type Body } from './batch-rules.js';
import { failedItem, itemBody } from './batch-items.js';
import { creditsShort, heldOnKey, holdOnKey } from '../state/billing.js';
import { decimal } from '../../internal/decimal.js';
import { counted } from '../../internal/counted.js';

/**
 * The credits of a batch run over providers (`record.held`): a request's bound, at the batch price,
 * is held before it is sent, and the hold is settled at the item's real charge once its result is on
 * disk. Both are one write of the store under the request's own key, so a kill -9 on either side of
 * either step neither loses nor doubles a charge: after a restart a request answered and not settled
 * is settled, and one held and not answered is sent again under the hold it has (docs/gateway.md).
 */
export { keyHash };
type KeyCount = Pick<KeyStore, 'keysOf' | 'keyUsed'>;

/** Counts what a batch was charged on the key that created it (`key_hash`), if it still exists. */
export function countOnKey(state: KeyCount, record: BatchRecord, cost: number): void {
  if (!record.key_hash || cost === 0) return;
  const key = state.keysOf(record.workspace).find((k) => keyHash(k.key) === record.key_hash);
  if (key) state.keyUsed(key.key, cost);
}

/** Settles a request's hold at its charge, counted on the batch's key when the hold was still open (once, over restarts). */
function settleCounted(state: CreditStore & KeyCount, record: BatchRecord, customId: string, charge: number): void {
  const key = holdKey(record, customId);
  const open = state.charged(key);
  state.settleHold(record.workspace, key, charge);
  if (open) countOnKey(state, record, charge);
}

/** Why a request of a batch over providers was not sent: the caller's credits, or its key's limit, did not cover it. */
export type Unsent = 'credits' | 'key';

export class HeldCredits {
  /** The largest charge of a request of this batch answered so far: what one with no bound holds. */
  private largest = 0;
  /** The request the credits did not cover: what it would have held (none when unbounded) and the balance then. */
  shortBy: CreditsShort | undefined;
  /**
   * What each request of this batch in flight holds (this run), and on which key: held on the key in
   * memory as its own requests' holds are (billing.ts), so its live requests and its other batches see
   * it, and this batch sees theirs, until settled.
   */
  private readonly inFlight = new Map<string, { key: KeyRecord | undefined; cost: number }>();

  constructor(
    private readonly state: CreditStore & KeyCount & Pick<ClockStore, 'now'>,
    private readonly record: BatchRecord,
    private readonly gateway: BatchGateway,
  ) {}

  /** The key that created the batch, if it still exists (a deleted key counts and limits nothing). */
  private creator(): KeyRecord | undefined {
    return this.record.key_hash ? this.state.keysOf(this.record.workspace).find((k) => keyHash(k.key) === this.record.key_hash) : undefined;
  }

  /**
   * Whether the creating key's limit, less what this batch's requests in flight hold, covers `cost`
   * (and has something left): checked before each request is sent, as a key's own requests are.
   */
  private withinKeyLimit(key: KeyRecord | undefined, cost: number): boolean {
    const limit = key ? limitRemaining(key, this.state.now()) : null;
    if (limit === null) return true;
    const left = round(limit - heldOnKey(key!));
    return left > 0 && cost <= left;
  }

  /** The 403 words the service gives a key over its limit, for this batch's key. */
  keyLimitWords(): string {
    return keyLimitMessage(this.creator()?.limit_reset ?? null);
  }

  private key(customId: string): string {
    return holdKey(this.record, customId);
  }

  /**
   * Holds what the request may cost; false (nothing held, nothing to send) when the caller's credits do
   * not cover it. A request with no bound (a provider without prices, no token limit) holds the largest
   * charge of this batch's answers so far (nothing before the first), so the requests in flight
   * together fit the balance as far as the answers so far tell; what one costs past its hold is
   * charged up to what is left of the balance, never below zero (settleHold).
   */
  hold(customId: string, body: Body): Unsent | undefined {
    let bound: number | undefined;
    try {
      bound = this.gateway.bound(itemBody(this.record, body), this.record.endpoint);
    } catch {
      bound = undefined;
    }
    const cost = bound === undefined ? this.largest : round(bound * BATCH_DISCOUNT);
    // The creating key's limit, as it stands now (other requests of the key spend it too): checked as each request goes.
    const key = this.creator();
    if (!this.withinKeyLimit(key, cost)) return 'key';
    if (!this.state.holdOnce(this.record.workspace, cost, this.key(customId))) {
      this.shortBy = { cost: cost > 0 ? cost : undefined, balance: this.state.balance(this.record.workspace) };
      return 'credits';
    }
    this.inFlight.set(customId, { key, cost });
    if (key) holdOnKey(key, cost);
    return undefined;
  }

  /** Ends a request's hold at what its result is charged (nothing, for a failed item or one never sent). */
  settle(customId: string, item: Body | undefined): void {
    const charge = item ? itemCharge(item) : 0;
    this.largest = Math.max(this.largest, charge);
    this.letGo(customId);
    settleCounted(this.state, this.record, customId, charge);
  }

  /** Gives back what a request in flight holds on its key in memory (its hold in the store stays, for a restart). */
  private letGo(customId: string): void {
    const held = this.inFlight.get(customId);
    if (held === undefined) return;
    this.inFlight.delete(customId);
    if (held.key) holdOnKey(held.key, -held.cost);
  }

  /** The run is over (ended, or stopped with requests in flight): nothing of it is held on the key any more. */
  close(): void {
    for (const customId of [...this.inFlight.keys()]) this.letGo(customId);
  }
}

const holdKey = (record: BatchRecord, customId: string) => `batch:${record.id}:${customId}`;

/**
 * Ends every hold a batch over providers still has, once it ended (any way: completed, failed,
 * expired, cancelled; before or after a restart) and nothing of it is in flight: an answered
 * request's at its item's charge, any other's at nothing. A key already settled moves nothing, so
 * a crash mid-way and a second pass are harmless; the record says so once it is done.
 */
export async function releaseIfEnded(state: CreditStore & KeyCount & Pick<GenerationStore, 'generation'> & { batches: BatchStorage }, id: string, stopped: () => boolean): Promise<void> {
  const record = state.batches.get(id);
  if (!record || stopped() || !owesRelease(record)) return;
  const answered = new Map(asCharged(state, state.batches.completedResults(id)).map((r) => [r.custom_id as string, r]));
  for await (const req of state.batches.requests(id)) {
    if (stopped()) return;
    const item = answered.get(req.custom_id);
    settleCounted(state, record, req.custom_id, item ? itemCharge(item) : 0);
  }
  record.holds_released = true;
  state.batches.save(record);
}

/** A batch over providers that ended and may still hold credits. */
export const owesRelease = (r: BatchRecord) => !!r.held && !r.holds_released && TERMINAL.includes(r.status);

const UNSENT = 'not sent: the credits left did not cover this request';
/** The words of the 403 a key over its limit gets (billing.ts says them to its own requests). */
const keyLimitMessage = (reset: string | null) => `Key limit exceeded (${reset ?? 'total'} limit). Manage it using https://openrouter.ai/settings/keys`;

/**
 * After the pool, each request never sent: a hold a crash left it is given back, and when the
 * credits (or the key's limit: `why`) ran out it becomes a failed item (`add`). Answered ones are in `answered`.
 */
export async function releaseUnsent(requests: AsyncIterable<{ custom_id: string }>, answered: Map<string, Body>, credits: HeldCredits, endpoint: string, add?: (item: Body) => void, why: Unsent = 'credits'): Promise<void> {
  for await (const req of requests) {
    if (answered.has(req.custom_id)) continue;
    credits.settle(req.custom_id, undefined);
    add?.(why === 'key' ? unsentItem(req.custom_id, endpoint, 403, credits.keyLimitWords(), 'permission_denied') : unsentItem(req.custom_id, endpoint));
  }
}

/** A failed item the gateway made without sending its request (credits or the key's limit ran out). */
const isUnsent = (item: Body) => {
  const e = item.error as { message?: string; error_type?: string } | null;
  return e?.message === UNSENT || (e?.error_type === 'permission_denied' && !!e.message?.startsWith('Key limit exceeded'));
};

/** How many requests were sent: those answered, less the ones a credit or key-limit stop (before a restart) left unsent. */
export function sentCount(answered: Map<string, Body>): number {
  return [...answered.values()].filter((item) => !isUnsent(item)).length;
}

/** The result item of a request never sent because the caller's credits (or its key's limit) ran out: a failed item, charged nothing. */
export function unsentItem(customId: string, endpoint: string, status = 402, message = UNSENT, errorType = 'payment_required'): Body {
  return failedItem(endpoint, customId, status, message, errorType);
}

/** The 402 of Get a batch whose finalized cost the balance does not cover, in billing.ts's words: the cost and the balance. */
export function resultsOwed(id: string, due: number, balance: number): string {
  return `Insufficient credits: the finalized cost of batch ${id} is $${decimal(due)}, the balance is $${decimal(Math.max(0, balance))}. Add more credits, then get it again.`;
}

/** What the credits did not cover when a batch over providers stopped: the next request's hold (none: unbounded) and the balance. */
export interface CreditsShort {
  cost: number | undefined;
  balance: number;
}

/**
 * The batch's `error` once its credits (or its key's limit: `why`) ran out: a 402's (403's) `{code,
 * message}`; a 402's in billing.ts's words, with what the next request may cost and the balance.
 */
export function creditsRanOut(record: BatchRecord, sent: number, why: Unsent = 'credits', keyWords = '', short?: CreditsShort): { code: number; message: string } {
  const left = record.request_counts.total - sent;
  const after = `the batch stopped after ${sent} of ${counted(record.request_counts.total, 'request')}; ${left === 1 ? 'the other 1 was not sent and is' : `the other ${left} were not sent and are`} not charged`;
  if (why === 'key') return { code: 403, message: `${keyWords.replace(/\. Manage it.*$/, '')}: ${after} (raise the key's limit, or use another key, and submit them again)` };
  const words = short ? creditsShort("the batch's next request", short.cost, true, short.balance) : 'Insufficient credits';
  return { code: 402, message: `${words}: ${after} (add credits and submit them again)` };
}

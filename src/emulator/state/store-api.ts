/**
 * The one interface through which the emulator and the gateway read and write their lasting state:
 * keys and workspaces, credits, batches and their progress, generations served. `StateStore` (files
 * in the state folder) is the default; `MemoryStore` holds the same in memory. docs/gateway-store.md
 * maps each method to PostgreSQL. The methods are synchronous: a store over the network makes them
 * return promises (the callers are async already).
 */
import type { Batch } from '../../client/types.js';

/** `operator` belongs to no workspace: the emulator's own credential for its server-wide routes. */
export type KeyKind = 'standard' | 'management' | 'operator';

export type LimitReset = 'daily' | 'weekly' | 'monthly';

/** What the management API may set on a key (key-usage.ts keeps the rules). */
export interface KeySettings {
  name?: string;
  /** Spending limit in USD (null: none). */
  limit?: number | null;
  /** When the limit starts again (UTC midnight; weeks from Monday); null: never. */
  limit_reset?: LimitReset | null;
  include_byok_in_limit?: boolean;
  /** ISO 8601 UTC; null: never. */
  expires_at?: string | null;
  disabled?: boolean;
}

export interface KeyRecord {
  key: string;
  kind: KeyKind;
  workspace: string;
  name: string;
  created_at: number;
  /** The management API's settings (key-usage.ts); absent in records written before them: none. */
  limit?: number | null;
  limit_reset?: LimitReset | null;
  include_byok_in_limit?: boolean;
  expires_at?: string | null;
  disabled?: boolean;
  updated_at?: number;
  /** USD the key's requests (and the batches it created) cost: in all, and by UTC day (the last 40 days). */
  usage?: number;
  usage_days?: Record<string, number>;
}

export interface Workspace {
  id: string;
  /** Credits bought, in USD. */
  total_credits: number;
  /** Credits spent, in USD. */
  total_usage: number;
}

export const DEFAULT_CREDITS = 5;
export const OPERATOR_WORKSPACE = '*';
/** The gateway's estimates of unbounded requests kept (Store.estimates): at most this many endpoint and model pairs. */
export const ESTIMATES_KEPT = 10_000;

export interface KeyStore {
  /** A new workspace with `credits` and two keys (standard, management). */
  createWorkspace(id?: string, credits?: number): { workspace: Workspace; apiKey: string; managementKey: string };
  addKey(workspace: string, kind: KeyKind, name: string, settings?: KeySettings): string;
  findKey(key: string): KeyRecord | undefined;
  /** The workspace's keys (operator's aside), oldest first. */
  keysOf(workspace: string): KeyRecord[];
  /** Changes a key's settings, saved at once; `null` deletes the key. */
  updateKey(key: string, change: KeySettings | null): void;
  /** Counts a request's cost on the key that made it (negative: given back), saved as charges are. */
  keyUsed(key: string, cost: number): void;
  /** A workspace's first standard and management keys (the `default` one's, printed by `router serve`). */
  firstKeys(workspace?: string): { apiKey: string; managementKey: string };
  operatorKey(): string;
  /** Throws for a workspace that does not exist (a key's workspace always does). */
  workspace(id: string): Workspace;
}

/**
 * Costs are USD, moved by whole units of 1e-10. `key` (a key's text): the key that made the request,
 * whose usage moves with the charge (a settlement's: by the request's whole `cost`), kept with it in
 * one step (the file store: in the charge's own journal line).
 */
export interface CreditStore {
  balance(workspace: string): number;
  /**
   * Takes `cost` only when the balance is above zero and covers it, in one step: false (nothing taken) otherwise.
   * `generation`, on this and the charges below: the id of the generation the charge pays for, whose
   * record a file store keeps (or, lost to a kill -9, makes again at its start) for every charge.
   */
  hold(workspace: string, cost: number, key?: string, generation?: GenerationMark): boolean;
  /**
   * A hold for one request, settled by `settleRequest`: its id (0, nothing taken, as `hold` refuses).
   * One still open when the process died is given back at the next start (a file store's).
   */
  holdRequest(workspace: string, cost: number): number;
  /** Ends a request's hold at its real `cost` (the difference charged or given back); once. */
  settleRequest(workspace: string, hold: number, cost: number, key?: string, generation?: GenerationMark): void;
  /** Charges a cost known once the answer is made (may take the balance below zero). */
  debit(workspace: string, cost: number, key?: string, generation?: GenerationMark): void;
  /** Gives back what a hold took and was not used (a stream not delivered). */
  refund(workspace: string, cost: number, key?: string, generation?: GenerationMark): void;
  /** Charges `cost` once under `chargeKey`: false, and nothing charged, if that key was charged before. */
  debitOnce(workspace: string, cost: number, chargeKey: string): boolean;
  charged(chargeKey: string): boolean;
  /**
   * A hold made once under `chargeKey` (a batch request's bound before it is sent): true when the key
   * holds one already, or `cost` was taken now because the balance is above zero and covers it, in one
   * step with the key's record; false, and nothing taken, otherwise.
   */
  holdOnce(workspace: string, cost: number, chargeKey: string): boolean;
  /**
   * Ends the hold under `chargeKey` at its real `cost`: the difference is given back, or charged up to
   * what is left of the balance (never below zero), and the key let go, in one step; a key that holds
   * nothing (settled before, or never held) moves nothing.
   */
  settleHold(workspace: string, chargeKey: string, cost: number): void;
  /**
   * Why charges made are in memory only (a disk that takes no more: a kill -9 now would lose them),
   * until a save holding them lands; undefined when every charge is on disk (a store without a disk).
   */
  chargesUnsaved?(): string | undefined;
  /** Writes every charge made so far to disk, now (a store without a disk has none to write). */
  flushCharges?(): void;
  /** Charge keys never asked again (their batch ended and is paid): the store may let them go. */
  forgetCharges(chargeKeys: Iterable<string>): void;
  /** Adds credits (negative takes them away); returns the balance. */
  topUp(workspace: string, amount: number): number;
}

/** The emulator's clock: real time moved forward by the operator (`/_emulator/clock`). */
export interface ClockStore {
  now(): number;
  clockOffsetMs(): number;
  advanceClock(ms: number): number;
}

export interface BatchUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  is_byok: boolean;
  [key: string]: unknown;
}

/** A stored batch: the wire object's fields (without `object` and `results`) and what the emulator keeps beside them. */
export interface BatchRecord extends Omit<Batch, 'object' | 'results' | 'usage' | 'endpoint'> {
  workspace: string;
  endpoint: string;
  usage: BatchUsage | null;
  provider: { only?: string[]; allow_fallbacks?: boolean } | null;
  /** Finalized cost still owed: GET answers 402 until the balance covers it. */
  payment_due: number | null;
  results_deleted: boolean;
  /** Run over providers: each request's credits held before it is sent and settled after; nothing charged at the end. */
  held?: boolean;
  /** Set once a held batch ended and every hold it had was settled or given back. */
  holds_released?: boolean;
  /** The SHA-256 of the key that created it: what it is charged counts on that key (none in older records). */
  key_hash?: string;
  /** Its saved results' `usage.cost` is at the batch price: made by this build, or repriced once (priceSavedResults). */
  priced_results?: boolean;
  /** A `provider=` status fault its create request carried (http/faults.ts): each of its requests meets it, as a call alone would. */
  provider_fault?: { provider: string; status: number; retry_after?: string };
}

/** A batch's requests as they are uploaded, before the batch exists. */
export interface BatchUpload {
  /** Whole lines (`{"custom_id","body"}` each, newline-ended), all of them or an error. */
  append(lines: Buffer): void;
  /** The upload is complete and durable; `requests` may be read, `commit` may follow. */
  finish(): void;
  requests(): AsyncIterable<{ custom_id: string; body: Record<string, unknown> }>;
  /** Forgets the upload (refused, or failed mid-way). */
  discard(): void;
}

/** Where a running batch writes its results, one item at a time. */
export interface ResultSink {
  append(item: unknown): void;
  close(): void;
}

export interface BatchStorage {
  upload(id: string): BatchUpload;
  /** Makes a finished upload the batch `record` describes: from now on `get` finds it. */
  commit(record: BatchRecord, upload: BatchUpload): void;
  get(id: string): BatchRecord | undefined;
  all(): BatchRecord[];
  /** A workspace's batches, newest first (created_at, then id, descending). */
  newestFirst(workspace: string): readonly BatchRecord[];
  /** Saves a record changed in place (status, counts, usage, payment due). */
  save(record: BatchRecord): void;
  requests(id: string): AsyncIterable<{ custom_id: string; body: Record<string, unknown> }>;
  /** The results written so far (after a restart: each request answered once). */
  completedResults(id: string): Record<string, unknown>[];
  openResults(id: string): ResultSink;
  /** Writes these results in place of those saved (whole or not at all). */
  replaceResults(id: string, items: Record<string, unknown>[]): void;
  /** The results as JSON lines, in pieces of any size (a piece may end mid-line, never mid-character). */
  results(id: string): AsyncIterable<string>;
  /** Drops the requests and results (kept 30 days), and marks the record so. */
  deleteResults(record: BatchRecord): void;
}

/** The generation a charge pays for: its id, and the model and provider that answered, where known (a record made again after a kill -9 says them). */
export interface GenerationMark {
  id: string;
  model?: string;
  provider?: string;
}

/** A generation served, in the OpenAPI's GenerationResponse `data` shape, and whose it is. */
export interface KeptGeneration {
  workspace: string;
  /** The SHA-256 of the key it was served to (`GET /v1/activity`'s `api_key_hash`). */
  key?: string;
  data: Record<string, unknown>;
  /** The batch it answered a request of: kept apart from calls' generations (generation-log.ts). */
  batch?: string;
}

export interface GenerationStore {
  /** Keeps it for `GET /v1/generation` (a store may let the oldest go: such an id is not found). */
  keepGeneration(id: string, kept: KeptGeneration): void;
  generation(id: string): KeptGeneration | undefined;
  /** Every generation it still keeps, oldest first (`GET /v1/activity` sums them). */
  allGenerations(): Iterable<KeptGeneration>;
}

export interface Store extends KeyStore, CreditStore, ClockStore, GenerationStore {
  readonly batches: BatchStorage;
  /**
   * The gateway's estimates of unbounded requests (routing/gateway-credits.ts), by endpoint and model:
   * a store with a disk saves them with its state (never a journal line of their own) and reads them at
   * its start, so the first burst after a restart holds what the last run learned.
   */
  readonly estimates?: Map<string, number>;
  /** Settles once writes under way are done. */
  idle(): Promise<void>;
  /** Writes what is pending; nothing is written after. */
  close(): void;
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomHex } from '../http/ids.js';
import { round } from '../models/models.js';
import { crashPoint, removeStaleTemps, writeFileAtomicLater, writeFileAtomicSync, writeFileAtomicSyncOverLater } from './fsutil.js';
import { makeDir } from '../../internal/make-dir.js';
import { reportStorage, storageFailure, storageSaved } from './storage-failure.js';
import { BatchStore } from './batch-store.js';
import { GenerationFile } from './generation-file.js';
import { CallsAndBatches, KEEP } from './generation-log.js';
import { CreditRules } from './credits.js';
import { ChargeJournal } from './charge-journal.js';
import { ChargedGenerations } from './charged-generations.js';
import { paying, type Paying } from './paying.js';
import { releaseDeadHolds } from './request-holds.js';
import { applySettings, countUsage, newKey, replayKeyUsage } from './key-usage.js';
import { readState, type StateFile } from './state-file.js';
import { DEFAULT_CREDITS, ESTIMATES_KEPT, OPERATOR_WORKSPACE, type GenerationMark, type KeptGeneration, type KeyKind, type KeyRecord, type KeySettings, type Store, type Workspace } from './store-api.js';

export { DEFAULT_CREDITS, OPERATOR_WORKSPACE, type KeyKind, type KeyRecord, type Workspace };
/** The file store: keys, workspaces, balances, the clock offset in `<dir>/state.json` (mode 0600); batches under `<dir>/batches/`; generations in `<dir>/generations.jsonl` (a batch's requests' in `batch-generations.jsonl`). */
export class StateStore extends CreditRules implements Store {
  readonly dir: string;
  private batchStore: BatchStore | undefined;
  private readonly generations: ChargedGenerations;
  private readonly file: string;
  private state: StateFile;
  /** The keys by their text: every request looks its key up. */
  private readonly byKey = new Map<string, KeyRecord>();
  private readonly journal: ChargeJournal;
  /** Saved with each save of the state (snapshot), read at the start: the newest ESTIMATES_KEPT (a longer table, edited, cut to it). */
  readonly estimates: Map<string, number>;

  constructor(dir: string) {
    super();
    this.dir = dir;
    makeDir(dir);
    const file = (this.file = join(dir, 'state.json'));
    removeStaleTemps(file);
    this.state = existsSync(file) ? readState(file) : { keys: [], workspaces: {}, clock_offset_ms: 0 };
    for (const record of this.state.keys) if (!this.byKey.has(record.key)) this.byKey.set(record.key, record);
    this.estimates = new Map(Object.entries(this.state.estimates ?? {}).filter(([, cost]) => cost > 0).slice(-ESTIMATES_KEPT));
    this.generations = new ChargedGenerations(new CallsAndBatches(new GenerationFile(dir), new GenerationFile(dir, KEEP, 'batch-generations')), () => this.journal.flush());
    this.journal = new ChargeJournal(dir, this.state.journal_seq ?? 0, this.state.journal_segment ?? 0);
    // Charges (and keys' usage) a kill -9 left in the journal only: made again, saved, and the segments read deleted.
    const unsaved = this.journal.unsaved().filter((e) => this.state.workspaces[e.w]);
    replayKeyUsage(this.state.keys, unsaved, (e) => this.charge(e.w, e.c));
    const dead = releaseDeadHolds(this.openHolds, this.state.holds, unsaved, (w, hold, cost) => this.settleRequest(w, hold, cost));
    // Charges whose generations' records a kill -9 lost (charged-generations.ts): made again, first.
    if (this.generations.recover(this.state.unrecorded, unsaved, (w) => this.state.workspaces[w] !== undefined, this.now()) || unsaved.length || dead || this.journal.leftovers) this.save();
    if (this.state.keys.length === 0) this.createWorkspace('default');
    if (!this.state.keys.some((k) => k.kind === 'operator')) this.addKey(OPERATOR_WORKSPACE, 'operator', 'operator');
  }

  /** The batches' folder, read when first used. */
  get batches(): BatchStore {
    return (this.batchStore ??= new BatchStore(this.dir));
  }

  keepGeneration(id: string, kept: KeptGeneration): void { this.generations.keep(id, kept); }
  generation(id: string): KeptGeneration | undefined { return this.generations.get(id); }
  allGenerations(): Iterable<KeptGeneration> { return this.generations.all(); }

  private pending: NodeJS.Timeout | undefined;
  /** Bumped by every save begun: a save that finishes after a later one began is stale. */
  private version = 0;
  /** The timer's save, while its write is under way. */
  private saving: Promise<void> | undefined;
  private closed = false;
  /** Saves made, for tests: `atOnce` on the event loop (fsynced there), `later` off it (or dropped for a newer one). */
  readonly saves = { atOnce: 0, later: 0 };

  /** Per-request charges are saved at most every 100 ms, off the event loop; the journal keeps them over a kill -9 meanwhile. Every other change is saved at once. */
  private saveSoon(): void {
    if (this.closed) return;
    this.pending ??= setTimeout(() => this.saveWhenDue(), 100).unref();
  }

  /** The timer's save. One that fails (a full disk) does not stop the emulator: the charges stay in memory, the failure is said once on stderr, the save tried again each second. */
  private saveWhenDue(): void {
    this.pending = undefined;
    if (this.closed) return;
    if (this.saving) return this.saveSoon();
    const version = ++this.version;
    const [segment, seq] = this.snapshot(true);
    crashPoint('journal-switched');
    // A save at once made while this one is under way goes to disk after it, or its rename moves that save's data.
    this.saving = writeFileAtomicLater(this.file, JSON.stringify(this.state, null, 2), () => version === this.version)
      .then(async () => {
        // Dropped for a save at once, this one says nothing: that save said it, or failed.
        if (version === this.version) storageSaved();
        this.saves.later++;
        crashPoint('state-renamed');
        // Dropped for (or overtaken by) a save begun since: that one deleted what it holds, if it got to disk; if it failed, the state.json on disk may be older than this one, and holds none of these segments. They go off the event loop, while this save is still under way (idle() waits for them).
        if (version === this.version) await this.journal.savedLater(segment, seq);
        crashPoint('segments-removed');
      }, (err: unknown) => {
        const why = storageFailure(err);
        if (!why) throw err;
        reportStorage(why, 'charges are kept in memory and saved once it can');
        this.retryLater();
      })
      .finally(() => (this.saving = undefined));
  }

  /** A failed save is tried again in a second (by the timer's save, of the whole state), until one lands. */
  private retryLater(): void {
    this.pending ??= setTimeout(() => this.saveWhenDue(), 1000).unref();
  }

  /** Settles once the timer's save under way, if any, is on disk (or failed), and the charges and generations kept so far are written; a save the timer began meanwhile too (a close follows a stop's wait: nothing may land after it). */
  async idle(): Promise<void> {
    for (let saving = this.saving, opening = this.journal.opening; ; saving = this.saving, opening = this.journal.opening) {
      this.journal.flush();
      await Promise.all([saving, opening, this.generations.written()]);
      if (!this.saving && this.journal.opening === opening) return;
    }
  }

  /** Writes what is pending, and the estimates if they changed (with charges: journal lines, no save); then nothing is written (the state folder may be removed). */
  close(): void {
    if (this.pending || JSON.stringify(this.estimates.size ? Object.fromEntries(this.estimates) : undefined) !== JSON.stringify(this.state.estimates)) this.save(false);
    this.closed = true;
    this.journal.close();
    this.generations.end();
  }

  /** Saves at once; one that fails is said and retried (`retry`: not at the stop, where it throws to say so). */
  private save(retry = true): void {
    if (this.closed) return;
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    this.version++;
    const [segment, seq] = this.snapshot();
    const data = JSON.stringify(this.state, null, 2);
    try {
      if (this.saving) writeFileAtomicSyncOverLater(this.file, data);
      else writeFileAtomicSync(this.file, data);
    } catch (err) {
      // The change (a key, a charge's record, a top-up) is made in memory: retried until it lands.
      const why = storageFailure(err);
      if (why && retry) {
        reportStorage(why, 'changes are kept in memory and saved once it can');
        this.retryLater();
      }
      throw err;
    }
    storageSaved();
    this.saves.atOnce++;
    this.journal.saved(segment, seq);
  }

  /** Readies a save: charges go to a new journal segment (opened off the event loop for the timer's: `ahead`), the state says where the journal stands (and the holds open); returns the first segment it lacks, and its last entry. */
  private snapshot(ahead = false): [number, number] {
    const segment = (this.state.journal_segment = this.journal.next(ahead));
    this.state.journal_seq = this.journal.seq;
    this.state.holds = this.openHolds.size ? this.openHolds.record() : undefined;
    this.state.unrecorded = this.generations.unrecorded();
    this.state.estimates = this.estimates.size ? Object.fromEntries(this.estimates) : undefined;
    return [segment, this.journal.seq];
  }

  /** A hold's id is the sequence number its journal line takes: unique over restarts. */
  protected override nextHoldId(): number {
    return this.journal.seq + 1;
  }

  protected override moveHeld(id: string, cost: number, mark: { h?: number; r?: number; g?: string }, use?: { key: string; cost: number }): void {
    this.journaled(id, cost, mark, use);
  }

  now(): number {
    return Date.now() + this.state.clock_offset_ms;
  }

  clockOffsetMs(): number { return this.state.clock_offset_ms; }

  advanceClock(ms: number): number {
    this.state.clock_offset_ms += ms;
    this.save();
    return this.state.clock_offset_ms;
  }

  createWorkspace(id = `ws_${randomHex(6)}`, credits = DEFAULT_CREDITS): { workspace: Workspace; apiKey: string; managementKey: string } {
    const workspace: Workspace = { id, total_credits: credits, total_usage: 0 };
    this.state.workspaces[id] = workspace;
    const apiKey = this.addKey(id, 'standard', 'demo', {}, false);
    const managementKey = this.addKey(id, 'management', 'management', {}, false);
    this.save();
    return { workspace, apiKey, managementKey };
  }

  addKey(workspace: string, kind: KeyKind, name: string, settings: KeySettings = {}, persist = true): string {
    const key = newKey(kind);
    const record: KeyRecord = { key, kind, workspace, name, created_at: Math.floor(this.now() / 1000), ...settings };
    this.state.keys.push(record);
    this.byKey.set(key, record);
    if (persist) this.save();
    return key;
  }

  findKey(key: string): KeyRecord | undefined { return this.byKey.get(key); }

  firstKeys(workspace = 'default'): { apiKey: string; managementKey: string } {
    const keys = this.keysOf(workspace);
    return { apiKey: keys.find((k) => k.kind === 'standard')!.key, managementKey: keys.find((k) => k.kind === 'management')!.key };
  }

  keysOf(workspace: string): KeyRecord[] {
    return this.state.keys.filter((k) => k.workspace === workspace);
  }

  updateKey(key: string, change: KeySettings | null): void {
    const record = this.byKey.get(key);
    if (!record) return;
    if (change !== null) applySettings(record, change, this.now());
    else {
      this.state.keys = this.state.keys.filter((k) => k !== record);
      this.byKey.delete(key);
    }
    this.save();
  }

  keyUsed(key: string, cost: number): void {
    const record = this.byKey.get(key);
    if (!record || cost === 0) return;
    this.journal.append(record.workspace, cost, countUsage(record, cost, this.now())); // journaled: a kill -9 before the save keeps it
    this.saveSoon();
  }

  /** The emulator operator's key (clock, batch pace, new workspaces, every workspace's log and faults). */
  operatorKey(): string {
    return this.state.keys.find((k) => k.kind === 'operator')!.key;
  }

  workspace(id: string): Workspace {
    const ws = this.state.workspaces[id];
    if (!ws) throw new Error(`no workspace ${id}`);
    return ws;
  }

  debit(id: string, cost: number, key?: string, generation?: GenerationMark): void { if (cost > 0) this.journaled(id, cost, paying(generation), key === undefined ? undefined : { key, cost }); }

  readonly chargesUnsaved = (): string | undefined => this.journal.failing;
  readonly flushCharges = (): void => this.journal.flush();
  /** A per-request charge: in the journal before its answer is sent, in state.json within 100 ms; `use`, the calling key's usage, in the same line (one write(2)); `g`, its generation, kept as unrecorded until its record is written (a settlement's whole cost, `use`'s). */
  private journaled(id: string, cost: number, mark?: { h?: number; r?: number } & Paying, use?: { key: string; cost: number }): void {
    this.charge(id, cost);
    const record = use && this.byKey.get(use.key);
    const usage = record && use.cost !== 0 ? countUsage(record, use.cost, this.now()) : undefined;
    this.journal.append(id, cost, mark, usage?.k, use?.cost, usage?.t);
    if (mark?.g !== undefined) this.generations.charged(mark.g, id, use?.cost ?? cost, usage?.k, usage?.t, mark);
    this.saveSoon();
  }

  charged(key: string): boolean { return key in (this.state.charges ?? {}); }

  /** Debits `cost` once for `key`: the charge and its record go to disk in one atomic write, so a crash on either side of it can neither lose the charge nor make it twice. False if already made. */
  debitOnce(id: string, cost: number, key: string): boolean {
    const charges = (this.state.charges ??= {});
    if (key in charges) return false;
    charges[key] = cost;
    if (cost > 0) this.charge(id, cost);
    this.save();
    return true;
  }

  /** Forgets charge keys never asked again (their batch ended, paid, saved): state.json stays the size of the batches in flight. The next save writes it; a crash before then keeps a harmless key. */
  forgetCharges(keys: Iterable<string>): void {
    const charges = this.state.charges;
    if (charges) for (const key of keys) delete charges[key];
  }

  settleHold(id: string, key: string, cost: number): void {
    const charges = this.state.charges;
    if (!charges || !(key in charges)) return;
    this.charge(id, this.settlement(id, charges[key]!, cost));
    delete charges[key];
    this.save();
  }

  /** Gives back a reserved cost not used (a stream not delivered). */
  refund(id: string, cost: number, key?: string, generation?: GenerationMark): void { if (cost > 0) this.journaled(id, -cost, paying(generation), key === undefined ? undefined : { key, cost: -cost }); }

  /** Usage moves by whole units of 1e-10 USD: sums of costs carry no float noise. */
  private charge(id: string, cost: number): void {
    const ws = this.workspace(id);
    ws.total_usage = round(ws.total_usage + cost);
  }

  topUp(id: string, amount: number): number {
    const ws = this.workspace(id);
    ws.total_credits = round(ws.total_credits + amount);
    this.save();
    return this.balance(id);
  }
}

import { randomHex } from '../http/ids.js';
import { round } from '../models/models.js';
import { newestFirst, type BatchRecord } from './batch-store.js';
import { CallsAndBatches, GenerationLog } from './generation-log.js';
import { CreditRules } from './credits.js';
import { applySettings, countUsage, newKey } from './key-usage.js';
import { DEFAULT_CREDITS, OPERATOR_WORKSPACE, type BatchStorage, type BatchUpload, type KeptGeneration, type KeyKind, type KeyRecord, type KeySettings, type ResultSink, type Store, type Workspace } from './store-api.js';

type Request = { custom_id: string; body: Record<string, unknown> };

/**
 * Everything in memory, gone when the process ends: the second implementation of `Store`, run
 * through the same contract tests as the file store (test/unit/emulator-store.test.ts), and a store
 * for an emulator that keeps nothing (`startEmulator({ store: new MemoryStore() })`).
 */
export class MemoryStore extends CreditRules implements Store {
  readonly batches = new MemoryBatches();
  private readonly keys = new Map<string, KeyRecord>();
  private readonly workspaces = new Map<string, Workspace>();
  private readonly charges = new Map<string, number>();
  private readonly generations = new CallsAndBatches(new GenerationLog(), new GenerationLog());
  private offsetMs = 0;

  constructor() {
    super();
    this.createWorkspace('default');
    this.addKey(OPERATOR_WORKSPACE, 'operator', 'operator');
  }

  createWorkspace(id = `ws_${randomHex(6)}`, credits = DEFAULT_CREDITS): { workspace: Workspace; apiKey: string; managementKey: string } {
    const workspace: Workspace = { id, total_credits: credits, total_usage: 0 };
    this.workspaces.set(id, workspace);
    return { workspace, apiKey: this.addKey(id, 'standard', 'demo'), managementKey: this.addKey(id, 'management', 'management') };
  }

  addKey(workspace: string, kind: KeyKind, name: string, settings: KeySettings = {}): string {
    const key = newKey(kind);
    this.keys.set(key, { key, kind, workspace, name, created_at: Math.floor(this.now() / 1000), ...settings });
    return key;
  }

  findKey(key: string): KeyRecord | undefined {
    return this.keys.get(key);
  }

  keysOf(workspace: string): KeyRecord[] {
    return [...this.keys.values()].filter((k) => k.workspace === workspace);
  }

  updateKey(key: string, change: KeySettings | null): void {
    const record = this.keys.get(key);
    if (!record) return;
    if (change === null) this.keys.delete(key);
    else applySettings(record, change, this.now());
  }

  keyUsed(key: string, cost: number): void {
    const record = this.keys.get(key);
    if (record) countUsage(record, cost, this.now());
  }

  firstKeys(workspace = 'default'): { apiKey: string; managementKey: string } {
    const keys = [...this.keys.values()].filter((k) => k.workspace === workspace);
    return { apiKey: keys.find((k) => k.kind === 'standard')!.key, managementKey: keys.find((k) => k.kind === 'management')!.key };
  }

  operatorKey(): string {
    return [...this.keys.values()].find((k) => k.kind === 'operator')!.key;
  }

  workspace(id: string): Workspace {
    const ws = this.workspaces.get(id);
    if (!ws) throw new Error(`no workspace ${id}`);
    return ws;
  }

  debit(id: string, cost: number, key?: string): void {
    if (cost <= 0) return;
    this.move(id, cost);
    if (key !== undefined) this.keyUsed(key, cost);
  }

  refund(id: string, cost: number, key?: string): void {
    if (cost <= 0) return;
    this.move(id, -cost);
    if (key !== undefined) this.keyUsed(key, -cost);
  }

  debitOnce(id: string, cost: number, chargeKey: string): boolean {
    if (this.charges.has(chargeKey)) return false;
    this.charges.set(chargeKey, cost);
    this.debit(id, cost);
    return true;
  }

  settleHold(id: string, chargeKey: string, cost: number): void {
    const held = this.charges.get(chargeKey);
    if (held === undefined) return;
    this.move(id, this.settlement(id, held, cost));
    this.charges.delete(chargeKey);
  }

  charged(chargeKey: string): boolean {
    return this.charges.has(chargeKey);
  }

  forgetCharges(chargeKeys: Iterable<string>): void {
    for (const key of chargeKeys) this.charges.delete(key);
  }

  topUp(id: string, amount: number): number {
    const ws = this.workspace(id);
    ws.total_credits = round(ws.total_credits + amount);
    return this.balance(id);
  }

  private move(id: string, cost: number): void {
    const ws = this.workspace(id);
    ws.total_usage = round(ws.total_usage + cost);
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  clockOffsetMs(): number {
    return this.offsetMs;
  }

  advanceClock(ms: number): number {
    return (this.offsetMs += ms);
  }

  keepGeneration(id: string, kept: KeptGeneration): void {
    this.generations.keep(id, kept);
  }

  generation(id: string): KeptGeneration | undefined {
    return this.generations.get(id);
  }

  allGenerations(): Iterable<KeptGeneration> {
    return this.generations.all();
  }

  async idle(): Promise<void> {}

  close(): void {}
}

/** A batch upload held as its lines. */
class MemoryUpload implements BatchUpload {
  readonly lines: Request[] = [];
  private carry = '';
  append(lines: Buffer): void {
    const text = this.carry + lines.toString('utf8');
    const end = text.lastIndexOf('\n');
    this.carry = text.slice(end + 1);
    for (const line of text.slice(0, end + 1).split('\n')) if (line) this.lines.push(JSON.parse(line) as Request);
  }
  finish(): void {
    if (this.carry) throw new Error('an upload that ends mid-line');
  }
  async *requests(): AsyncGenerator<Request> {
    yield* this.lines;
  }
  discard(): void {
    this.lines.length = 0;
  }
}

class MemoryBatches implements BatchStorage {
  private readonly records = new Map<string, BatchRecord>();
  private readonly inputs = new Map<string, Request[]>();
  private readonly outputs = new Map<string, string[]>();

  upload(): BatchUpload {
    return new MemoryUpload();
  }

  commit(record: BatchRecord, upload: BatchUpload): void {
    if (!(upload instanceof MemoryUpload)) throw new Error('not an upload of this store');
    this.records.set(record.id, record);
    this.inputs.set(record.id, upload.lines);
  }

  get(id: string): BatchRecord | undefined {
    return this.records.get(id);
  }

  all(): BatchRecord[] {
    return [...this.records.values()];
  }

  newestFirst(workspace: string): readonly BatchRecord[] {
    return this.all().filter((r) => r.workspace === workspace).sort(newestFirst);
  }

  save(record: BatchRecord): void {
    this.records.set(record.id, record);
  }

  async *requests(id: string): AsyncGenerator<Request> {
    yield* this.inputs.get(id) ?? [];
  }

  completedResults(id: string): Record<string, unknown>[] {
    return (this.outputs.get(id) ?? []).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  openResults(id: string): ResultSink {
    const lines = this.outputs.get(id) ?? [];
    this.outputs.set(id, lines);
    return { append: (item) => lines.push(JSON.stringify(item)), close: () => {} };
  }

  replaceResults(id: string, items: Record<string, unknown>[]): void {
    this.outputs.set(id, items.map((item) => JSON.stringify(item)));
  }

  async *results(id: string): AsyncGenerator<string> {
    for (const line of this.outputs.get(id) ?? []) yield `${line}\n`;
  }

  deleteResults(record: BatchRecord): void {
    this.inputs.delete(record.id);
    this.outputs.delete(record.id);
    record.results_deleted = true;
    this.save(record);
  }
}

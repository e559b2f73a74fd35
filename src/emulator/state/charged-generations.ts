import { counted } from '../../internal/counted.js';
import { round } from '../models/models.js';
import { generationData } from '../resources/generations.js';
import { GATHER_MS, type GenerationFile } from './generation-file.js';
import { KEEP, type CallsAndBatches } from './generation-log.js';
import type { JournalEntry } from './charge-journal.js';
import type { Unrecorded } from './state-file.js';
import type { KeptGeneration } from './store-api.js';


/**
 * The file store's generations, kept so that a kill -9 at any instant leaves every charge explained
 * by a record, and no record of a charge not made. A charge's journal line names its generation
 * (`g`); its record is written by another write, the generations file's. So:
 * - a record is handed to that file only once the charges made before it are written (on the event
 *   loop, at once): it never lands before the charge it explains (a kill between gave back the hold of a stream its record said was paid);
 * - a charge is kept here (`charged`) until its record is written, every save of the state holds
 *   those kept (`unrecorded`), and a start makes a record, marked `recovered`, at the cost charged, for
 *   each charge (saved so, or in the journal since) whose generation it cannot find. Before, 4 in 25
 *   rounds of kill -9 of a busy gateway left a charge whose `GET /v1/generation?id=` was a 404.
 */
export class ChargedGenerations {
  /**
   * Charges whose records are not known written, by generation id. Each of these two Maps is made anew
   * when emptied: a Map that lived long enough to be promoted makes each table it grows or shrinks into
   * in the old generation, and an id in, an id out per request made one there every few requests
   * (V8's sampling heap profiler: ~0.3 KB a request for mark-compacts to collect).
   */
  private charges = new Map<string, Unrecorded>();
  /** Generations kept since the last check, whose records are being written. */
  private keptIds: string[] = [];
  private checking: Promise<void> | undefined;

  /** `flushCharges`: writes the charges made so far. */
  constructor(private readonly generations: CallsAndBatches<GenerationFile>, private readonly flushCharges: () => void) {}

  /** Keeps a generation's record, written after the charges made before it. */
  keep(id: string, kept: KeptGeneration): void {
    this.flushCharges();
    this.write(id, kept);
  }

  private write(id: string, kept: KeptGeneration): void {
    this.generations.keep(id, kept);
    if (!this.charges.has(id)) return;
    this.keptIds.push(id);
    this.checking ??= this.letGoWritten();
  }

  get(id: string): KeptGeneration | undefined {
    return this.generations.get(id);
  }

  *all(): Iterable<KeptGeneration> {
    yield* this.generations.all();
  }

  /** A charge of `cost` (negative: given back) for generation `id`, just journaled: kept while the sum is above zero. */
  charged(id: string, workspace: string, cost: number, keyHash?: string, at?: number, by?: { m?: string; p?: string }): void {
    const before = this.charges.get(id);
    const c = round((before?.c ?? 0) + cost);
    this.charges.delete(id);
    if (c > 0) this.charges.set(id, unrecordedCharge(workspace, c, keyHash, at, by ?? before));
    if (this.charges.size > KEEP) this.charges.delete(this.charges.keys().next().value!);
  }

  private async letGoWritten(): Promise<void> {
    // Once the generations' own timer is due: the records gathered meanwhile go in one write.
    await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
    while (this.keptIds.length) {
      const ids = this.keptIds;
      this.keptIds = [];
      // Twice: the write under way may hold none of them; the next holds them all.
      await this.generations.idle();
      await this.generations.idle();
      for (const id of ids) this.charges.delete(id);
      if (!this.charges.size) this.charges = new Map();
    }
    this.checking = undefined;
  }

  /** For the state file: the charges whose records are not known written, if any. */
  unrecorded(): Record<string, Unrecorded> | undefined {
    return this.charges.size ? Object.fromEntries(this.charges) : undefined;
  }

  /**
   * At start: makes a record (`recovered`) for each charge a save left unrecorded, or the journal made
   * since, whose generation is not found (of a workspace that `exists`); says how many.
   */
  recover(saved: Record<string, Unrecorded> | undefined, unsaved: JournalEntry[], exists: (workspace: string) => boolean, now: number): number {
    let made = 0;
    for (const [id, charge] of chargesToRecord(saved, unsaved)) {
      if (!exists(charge.w) || this.get(id)) continue;
      this.charged(id, charge.w, charge.c, charge.kh, charge.t);
      this.write(id, recoveredGeneration(id, charge, now));
      made++;
    }
    if (made) process.stderr.write(`router serve: made again the records of ${counted(made, 'generation')} charged for that a kill -9 lost ("recovered": true)\n`);
    return made;
  }

  /** Settles once the records kept so far are written (or failed to be), and the charges before them. */
  async written(): Promise<void> {
    this.flushCharges();
    await this.generations.written();
  }

  /** Writes what is pending; nothing is written after. */
  end(): void {
    this.generations.end();
  }
}

/** The charges a save left unrecorded, and those the journal made since, summed by generation. */
function chargesToRecord(saved: Record<string, Unrecorded> | undefined, unsaved: JournalEntry[]): Map<string, Unrecorded> {
  const charges = new Map(Object.entries(saved ?? {}));
  for (const e of unsaved) {
    if (e.g === undefined) continue;
    const before = charges.get(e.g);
    charges.set(e.g, unrecordedCharge(e.w, round((before?.c ?? 0) + (e.kc ?? e.c)), e.kh ?? before?.kh, e.t ?? before?.t, e.m !== undefined ? e : before));
  }
  for (const [id, charge] of charges) if (!(charge.c > 0)) charges.delete(id);
  return charges;
}

/** A charge kept until its record is written, naming the model and provider `by` names as text (set one by one, not spread: measured, fewer bytes promoted per request). */
function unrecordedCharge(w: string, c: number, kh: string | undefined, t: number | undefined, by: { m?: unknown; p?: unknown } | undefined): Unrecorded {
  const charge: Unrecorded = { w, c, kh, t };
  if (typeof by?.m === 'string') charge.m = by.m;
  if (typeof by?.p === 'string') charge.p = by.p;
  return charge;
}

/** A generation's record made again at start from its charge: what it cost, when, to which key, and the model and provider its charge named; the rest unknown. */
function recoveredGeneration(id: string, charge: Unrecorded, now: number): KeptGeneration {
  const at = charge.t ?? now;
  const served = { id, model: charge.m ?? 'unknown', provider: charge.p ?? 'unknown', apiType: 'completions' as const, promptTokens: 0, completionTokens: 0, cost: charge.c, streamed: false, finishReason: null, startedAt: at };
  const data = generationData(served, at, { origin: '', userAgent: null, referer: null, requestId: '' });
  return { workspace: charge.w, key: charge.kh, data: { ...data, provider_name: charge.p ?? null, request_id: null, recovered: true } };
}

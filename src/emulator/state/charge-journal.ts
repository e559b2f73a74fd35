/**
 * The charges journal's files, in the state folder (beside state.json, store.ts):
 * - `charges.<n>.jsonl`, n = 1, 2, …: segments, one JSON line an entry (`JournalEntry`: `s` its
 *   sequence number, `w` workspace, `c` cost, `h`/`r` a request's hold taken/settled, `g` the
 *   generation it pays for, `kh`/`kc`/`t`
 *   the calling key's usage, in the same line and write(2) as its charge). Lines go to the
 *   newest segment only; a process starts one above any on disk, so never appends to a file a crash
 *   may have left torn.
 * - Every save of state.json (store.ts), before it snapshots, moves appends on to a new segment
 *   (`next()`, on the event loop, so no charge falls between the two), and the snapshot records
 *   `journal_segment` (the first segment it does not hold) and `journal_seq` (the last entry it
 *   holds). Once it is renamed into place, the segments below go (`saved()`). No file is emptied or
 *   rewritten in place, so a steady stream of charges needs no save on the request path. A save at
 *   once made while a timed one is being renamed cannot be laid under it (fsutil.ts), so no
 *   state.json older than the segments deleted can land later.
 * - `charges.jsonl`: the single journal of older versions, read at start as segment 0.
 * At start, the segments from state.json's `journal_segment` on are read in order and their entries
 * above its `journal_seq` applied, once: a kill -9 at any point (between the switch and the rename,
 * between the rename and the deletion) leaves each entry either in the snapshot or above its
 * `journal_seq`, never both.
 * Segments below it are leftovers of a kill before their deletion, skipped and deleted by the save
 * the start makes. A line cut short (a crash, a full disk) is skipped and never joins the next.
 */
import { saySkippedLines } from './damaged-lines.js';
import { close, closeSync, fstatSync, open, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isFiniteNumber, isRecord } from '../../internal/shape.js';
import { crashPoint, failWriteForTests, storageHooks } from './fsutil.js';
import { LineWriter } from './line-writer.js';
import { reportStorage, storageFailure } from './storage-failure.js';

/** The last byte of an open file of `size` bytes. */
const lastByte = (fd: number, size: number): number => {
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, size - 1);
  return one[0]!;
};

export interface JournalEntry {
  /** Sequence number: entries above the state file's `journal_seq` are not in it yet. */
  s: number;
  /** Workspace and cost (negative: given back). */
  w: string;
  c: number;
  /** A request's hold taken (its id), or settled (`r`): one taken and never settled is given back at start. */
  h?: number;
  r?: number;
  /** The key whose usage moves with this charge: its hash (`kh`), its cost (`kc`: a settlement's is the request's whole cost), `t` when, in ms. */
  kh?: string;
  kc?: number;
  t?: number;
  /** The generation the charge pays for: a start makes its record again when a kill -9 lost it (store.ts). */
  g?: string;
  /** The model and provider of that generation (its record made again says them). */
  m?: string;
  p?: string;
  /** A line of a key's usage only, charging nothing (`c` its cost; `k` the key's hash): a batch's, and every paid request's in older versions. */
  k?: string;
}

/** What a line carries beside its charge: a hold's mark, a key's usage. */
export type JournalMark = Pick<JournalEntry, 'h' | 'r' | 'g' | 'm' | 'p' | 'kh' | 'kc' | 't'>;

/** A segment's file name: `charges.<n>.jsonl`; 0 is the single `charges.jsonl` of older versions. */
const segmentName = (n: number) => (n === 0 ? 'charges.jsonl' : `charges.${n}.jsonl`);
const SEGMENT = /^charges(?:\.([1-9]\d*))?\.jsonl$/;

/**
 * The per-request charges between two saves of state.json, one JSON line each, written (write(2), no
 * fsync) before the answer they pay for is sent: appended lines wait, and the first answer to end
 * (or a hold's answer to begin) writes them all with one write(2) on the event loop (`flush()`,
 * server.ts), else the loop's turn's end does (line-writer.ts). The line is in the kernel once write
 * returns, so a kill -9 of the gateway right after an answer loses no charge; a machine crash (power,
 * kernel) can lose what the disk had not yet got, as it could the last 100 ms before.
 */
export class ChargeJournal {
  private readonly dir: string;
  private fd: number | undefined;
  /** The segment lines go to now, and the segments on disk (or about to be). */
  private segment: number;
  private readonly onDisk = new Set<number>();
  /** The last sequence number written (or found at start). */
  seq: number;
  /** The last entry a write failed for, and why: in memory only until a state file holding it lands. */
  private failed: { why: string; seq: number } | undefined;
  /**
   * Segments opened (created) off the event loop at a timer's switch (`next(true)`): the one it moved
   * to and the one after, by number, each with its file open for its first line to take, with no
   * open(2) on the loop. Creating a file there, ~10 times a second under load, took over 1 ms in 12
   * of 140 switches on a busy machine (108 ms once), every open answer waiting; opened only at the
   * switch, the first charge after it still came first in about half of them.
   */
  private readonly ahead = new Map<number, number | 'opening'>();
  /** Settles once the segments being opened ahead are open (or failed to be: a first line opens its own then, as before). */
  opening: Promise<void> = Promise.resolve();
  private closed = false;
  /** Lines are written in order, those appended together in one write. */
  private readonly writer = new LineWriter((why, seq) => this.failedWrite(why, seq));
  /** A file opened since the last line: where it ends. */
  private opened: number | undefined;
  /** The last entry a state file on disk holds. */
  private heldSeq = 0;

  constructor(dir: string, savedSeq: number, savedSegment = 0) {
    this.dir = dir;
    this.seq = savedSeq;
    for (const name of readdirSync(dir)) {
      const n = SEGMENT.exec(name);
      if (n) this.onDisk.add(Number(n[1] ?? 0));
    }
    this.segment = Math.max(savedSegment, ...this.onDisk) + 1;
    this.floor = savedSegment;
  }

  /** The segment lines go to now. */
  private file(): string {
    return join(this.dir, segmentName(this.segment));
  }

  /** Segments below this one are held by the state file on disk. */
  private floor: number;

  /** Whether segments a save should delete are on disk: ones below the state file's, or replayed ones. */
  get leftovers(): boolean {
    return this.onDisk.size > 0;
  }

  /** The entries a crash left that the state file (saved up to `savedSeq`) has not got, in order. */
  unsaved(): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (const n of [...this.onDisk].sort((a, b) => a - b)) {
      if (n > 0 && n < this.floor) continue;
      let skipped = 0;
      for (const line of readFileSync(join(this.dir, segmentName(n)), 'utf8').split('\n')) {
        let entry: unknown;
        try {
          entry = JSON.parse(line);
        } catch {
          if (line.trim()) skipped++; // cut short by a crash or a full disk, or edited: never a charge half made
          continue;
        }
        if (!(isRecord(entry) && isFiniteNumber(entry.s) && typeof entry.w === 'string' && isFiniteNumber(entry.c))) skipped++;
        else if (entry.s > this.seq) {
          entries.push(entry as unknown as JournalEntry);
          this.seq = entry.s;
        }
      }
      saySkippedLines(join(this.dir, segmentName(n)), skipped);
    }
    return entries;
  }

  /**
   * Appends one charge to the newest segment, written by the next `flush()` (or the loop's turn's end).
   * A failed write (a full disk) is said once and does not stop the request: the charge stays in
   * memory, saved with the state file as before (`failing` says so).
   */
  append(workspace: string, cost: number, mark?: JournalMark, keyHash?: string, keyCost?: number, at?: number): void {
    let line = JSON.stringify({ s: ++this.seq, w: workspace, c: cost, ...mark });
    // The calling key's usage (`kh`, `kc`, `t`) added as text: a mark merged with it per charge promoted ~370 B a request.
    line = keyHash === undefined ? `${line}\n` : `${line.slice(0, -1)},"kh":${JSON.stringify(keyHash)},"kc":${JSON.stringify(keyCost)},"t":${JSON.stringify(at)}}\n`;
    try {
      if (storageHooks.full) failWriteForTests(this.file());
      if (this.fd === undefined) {
        // A segment not on disk yet is new (a process starts above any on disk, a switch goes one up): empty.
        const fresh = !this.onDisk.has(this.segment);
        const ready = this.ahead.get(this.segment);
        if (typeof ready === 'number') this.ahead.delete(this.segment);
        this.onDisk.add(this.segment);
        this.fd = typeof ready === 'number' ? ready : openSync(this.file(), 'a+', 0o600);
        if (typeof ready === 'number') crashPoint('segment-ahead-taken');
        this.opened = fresh ? 0 : fstatSync(this.fd).size;
        // A line a failed write left torn: the first write starts a line of its own, not joining it.
        if (this.opened > 0 && lastByte(this.fd, this.opened) !== 0x0a) line = `\n${line}`;
      }
    } catch (err) {
      const why = storageFailure(failedWriteOf(err, this.file()));
      if (!why) throw err;
      return this.failedWrite(why, this.seq);
    }
    this.writer.add(this.fd, this.file(), line, this.seq, this.opened);
    this.opened = undefined;
  }

  /** Writes the lines appended so far (what an answer's end and a hold's answer wait for); a failure is kept as an append's. */
  flush(): void {
    this.writer.flush();
  }

  /** Charges up to `seq` not written: in memory only until a state file holding them lands (said once). */
  private failedWrite(why: string, seq: number): void {
    reportStorage(why, 'charges are kept in memory and saved once it can; paid requests are refused meanwhile');
    if (seq > this.heldSeq) this.failed = { why, seq: Math.max(seq, this.failed?.seq ?? 0) };
  }

  /** Why a charge is in memory only (its write failed, no state file holding it landed since), if one is. */
  get failing(): string | undefined {
    return this.failed?.why;
  }

  /**
   * For a save about to snapshot the state: appends go to a new segment from now on (unless the
   * current one is still unwritten). Returns the first segment the snapshot does not hold.
   */
  next(ahead = false): number {
    if (this.fd !== undefined || this.onDisk.has(this.segment)) {
      // Closed off the event loop once the lines for it are written.
      const fd = this.fd;
      this.fd = undefined;
      this.opened = undefined;
      if (fd !== undefined) this.writer.closeAfter(fd);
      this.segment++;
      if (ahead) for (const n of [this.segment, this.segment + 1]) this.openAhead(n);
    }
    return this.segment;
  }

  /** Opens (creates) `segment` off the event loop, for its first line to take, unless it is open or opening; one no line came to by the close goes. */
  private openAhead(segment: number): void {
    if (this.ahead.has(segment) || this.onDisk.has(segment)) return;
    this.ahead.set(segment, 'opening');
    const path = join(this.dir, segmentName(segment));
    const opened = new Promise<void>((resolve) =>
      open(path, 'a+', 0o600, (err, fd) => {
        resolve();
        if (this.ahead.get(segment) === 'opening') this.ahead.delete(segment);
        if (err) return;
        // Still to come, or come and not yet written: its first line takes it.
        if (!this.closed && (segment > this.segment || (segment === this.segment && this.fd === undefined))) {
          this.ahead.set(segment, fd);
          crashPoint('segment-opened-ahead');
        } else {
          close(fd, () => {});
          if (!this.onDisk.has(segment)) removeQuietly(path);
        }
      }),
    );
    this.opening = Promise.all([this.opening, opened]).then(() => {});
  }

  /** A state file holding every segment below `segment`, and every entry up to `seq`, is on disk, and no older one can land over it: those go. */
  saved(segment: number, seq: number): void {
    for (const n of this.held(segment, seq)) {
      try {
        rmSync(join(this.dir, segmentName(n)), { force: true });
        this.onDisk.delete(n);
      } catch {
        // Kept: its entries are all at or below the state file's journal_seq, so never applied twice.
      }
    }
  }

  /**
   * As `saved`, the segments removed off the event loop (the timer's save, ~10 a second under load):
   * settles once they are gone. A kill -9 before leaves segments below the state file's, which the
   * next start skips and deletes.
   */
  async savedLater(segment: number, seq: number): Promise<void> {
    await Promise.all(
      this.held(segment, seq).map((n) => {
        this.onDisk.delete(n);
        return rm(join(this.dir, segmentName(n)), { force: true }).catch(() => this.onDisk.add(n)); // kept, as in saved(): the next save tries again
      }),
    );
  }

  /** The segments on disk a state file holding those below `segment`, and every entry up to `seq`, holds. */
  private held(segment: number, seq: number): number[] {
    this.heldSeq = Math.max(this.heldSeq, seq);
    if (this.failed && this.failed.seq <= seq) this.failed = undefined;
    this.floor = Math.max(this.floor, segment);
    return [...this.onDisk].filter((n) => n < this.floor);
  }

  close(): void {
    this.closed = true;
    if (this.fd !== undefined) this.writer.closeAfter(this.fd);
    this.fd = undefined;
    // Opened ahead and never written: no empty segment is left behind (one still opening goes when it is open).
    for (const [n, fd] of this.ahead) {
      if (fd === 'opening') continue;
      closeSync(fd);
      if (!this.onDisk.has(n)) removeQuietly(join(this.dir, segmentName(n)));
    }
    this.ahead.clear();
  }
}

/** Removes a file; one that cannot be removed stays (an empty segment: a start reads nothing from it, and its save removes it). */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // kept
  }
}

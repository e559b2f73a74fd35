import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isFiniteNumber, isRecord } from '../../internal/shape.js';
import { reportStorage, storageFailure } from './storage-failure.js';

/** The last byte of an open file of `size` bytes. */
const lastByte = (fd: number, size: number): number => {
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, size - 1);
  return one[0]!;
};

/** Past this size the journal asks for a save that empties it, even while charges keep coming. */
const COMPACT_BYTES = 4 * 1024 * 1024;

export interface JournalEntry {
  /** Sequence number: entries above the state file's `journal_seq` are not in it yet. */
  s: number;
  /** Workspace and cost (negative: given back). */
  w: string;
  c: number;
  /** A request's hold taken (its id), or settled (`r`): one taken and never settled is given back at start. */
  h?: number;
  r?: number;
}

/**
 * The per-request charges between two saves of state.json, one JSON line each in
 * `<dir>/charges.jsonl`, written (one write(2), no fsync) before the answer they pay for is sent.
 * The line is in the kernel once write returns, so a kill -9 of the gateway right after an answer
 * loses no charge; a machine crash (power, kernel) can lose what the disk had not yet got, as it
 * could the last 100 ms before. At start the entries the state file has not got are applied again;
 * a save that covers them all empties the file.
 */
export class ChargeJournal {
  private readonly file: string;
  private fd: number | undefined;
  private bytes = 0;
  /** The last sequence number written (or found at start). */
  seq: number;

  constructor(dir: string, savedSeq: number) {
    this.file = join(dir, 'charges.jsonl');
    this.seq = savedSeq;
  }

  /** The entries a crash left that the state file (saved up to `savedSeq`) has not got, in order. */
  unsaved(): JournalEntry[] {
    if (!existsSync(this.file)) return [];
    const entries: JournalEntry[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // an empty line, or one cut short by a full disk: never a charge half made
      }
      if (isRecord(entry) && isFiniteNumber(entry.s) && typeof entry.w === 'string' && isFiniteNumber(entry.c) && entry.s > this.seq) {
        entries.push(entry as unknown as JournalEntry);
        this.seq = entry.s;
      }
    }
    return entries;
  }

  /**
   * Appends one charge. A failed write (a full disk) is said once and does not stop the request: the
   * charge stays in memory, saved with the state file as before. True when the journal is large
   * enough that the next save should empty it.
   */
  append(workspace: string, cost: number, mark?: { h?: number; r?: number }): boolean {
    let line = `${JSON.stringify({ s: ++this.seq, w: workspace, c: cost, ...mark })}\n`;
    try {
      if (this.fd === undefined) {
        this.fd = openSync(this.file, 'a+', 0o600);
        this.bytes = fstatSync(this.fd).size;
        // A line a crash (or a failed cut) left torn: the first write starts a line of its own, not joining it.
        if (this.bytes > 0 && lastByte(this.fd, this.bytes) !== 0x0a) line = `\n${line}`;
      }
      const written = writeSync(this.fd, line);
      // A disk that had room for part of it: the part is cut off, or the next line would join it and both be lost.
      if (written < Buffer.byteLength(line)) {
        ftruncateSync(this.fd, this.bytes);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }
      this.bytes += written;
    } catch (err) {
      const why = storageFailure(failedWriteOf(err, this.file));
      if (!why) throw err;
      reportStorage(why, 'charges are kept in memory and saved once it can');
    }
    return this.bytes > COMPACT_BYTES;
  }

  /**
   * The state file now holds every entry up to `seq`: when none came since, the journal is emptied
   * (`all`: also what an earlier process left, once replayed and saved).
   */
  saved(seq: number, all = false): void {
    if (seq !== this.seq || (this.bytes === 0 && !all)) return;
    try {
      if (this.fd === undefined && all && existsSync(this.file)) truncateSync(this.file, 0);
      else if (this.fd !== undefined) ftruncateSync(this.fd, 0);
      this.bytes = 0;
    } catch {
      // Kept: its entries are all at or below the state file's journal_seq, so never applied twice.
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

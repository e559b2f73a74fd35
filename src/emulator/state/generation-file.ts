import { saySkippedLines } from './damaged-lines.js';
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, write, writeSync } from 'node:fs';
import { lineAt } from './line-at.js';
import { join } from 'node:path';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isRecord } from '../../internal/shape.js';
import { KEEP } from './generation-log.js';
import { LineIndex } from './line-index.js';
import { PendingLines } from './pending-lines.js';
import { reportStorage, storageFailing, storageFailure } from './storage-failure.js';
import type { KeptGeneration } from './store-api.js';

/** Lines to append, as their bytes: `used` of `bytes`, each line starting at its `starts`. */
interface Bytes {
  bytes: Buffer;
  used: number;
  starts: number[];
}

/**
 * How long generation lines gather before their write. Written after each turn of the event loop
 * instead, at 500 streamed requests/s each write woke a thread of libuv's and then the loop: 3.7
 * context switches a request against 2.5, ~100 µs more CPU a request (both gateways by turns).
 */
export const GATHER_MS = 20;

/** A line of the file as kept: its generation, when it is whole and names `id` (undefined when not). */
function keptOf(line: string, id?: string): { id: string; kept: KeptGeneration } | undefined {
  let kept: unknown;
  try {
    kept = JSON.parse(line);
  } catch {
    return undefined; // an empty line, or one a full disk cut short
  }
  if (!isRecord(kept) || typeof kept.id !== 'string' || typeof kept.workspace !== 'string' || !isRecord(kept.data)) return undefined;
  if (id !== undefined && kept.id !== id) return undefined;
  return { id: kept.id, kept: { workspace: kept.workspace, key: typeof kept.key === 'string' ? kept.key : undefined, data: kept.data, batch: typeof kept.batch === 'string' ? kept.batch : undefined } };
}

/**
 * The generations log kept on disk, so `GET /v1/generation` finds them after a restart or a
 * kill -9: one JSON line each in `<dir>/generations.jsonl`, gathered for GATHER_MS and written with
 * one write(2) on libuv's threads, one write at a time (no fsync: a kill -9 loses those gathered and
 * of a write under way, their charges' records made again at the next start, charged-generations.ts;
 * a machine crash what the disk had not got). Once the file holds `limit` lines it becomes `generations.old.jsonl` and a new
 * one begins: the two hold the newest `limit` at least, never more than twice that, and nothing is
 * ever rewritten. In memory only where each line starts, by id (a generation read back from its
 * line when asked for; line-index.ts): a record kept in memory for each answer made every young-generation
 * collection copy it, on the gateway's hot path.
 */
export class GenerationFile {
  private readonly file: string;
  private readonly old: string;
  private fd: number | undefined;
  private lines = 0;
  private size = 0;
  /** Where each line starts, by id: in `file`, or in `old`; the newest `max` of them. */
  private readonly starts: LineIndex;
  /** Lines kept since the last write, by id. */
  private pending = new PendingLines();
  /** Lines a write failed to keep (a full disk), or kept once ended: in memory only, the newest `max`. */
  private readonly unwritten = new Map<string, string>();
  private flushing: NodeJS.Timeout | undefined;
  /** Writes begun off the event loop, for tests. */
  writes = 0;
  /** Lines being written (off the event loop), by id: found here until they are. */
  private writing: PendingLines | undefined;
  /** What idle() gave: settled once the write under way is done. */
  private wrote: { done: Promise<void>; settle: () => void } | undefined;
  /** The file ends in a line cut short (a crash, a full disk): the next write begins a line of its own. */
  private torn = false;

  private ended = false;
  /** end() was called while a write was under way: the end comes once it is done. */
  private ending = false;

  /** `name`: the file's (`generations`; a batch's requests' in `batch-generations`). */
  constructor(dir: string, private readonly max = KEEP, name = 'generations') {
    this.file = join(dir, `${name}.jsonl`);
    this.old = join(dir, `${name}.old.jsonl`);
    this.starts = new LineIndex(max, (id, at, older) => {
      const line = lineAt(older ? this.old : this.file, at);
      return line !== undefined && keptOf(line, id) !== undefined;
    });
    for (const path of [this.old, this.file]) {
      if (!existsSync(path)) continue;
      const buf = readFileSync(path);
      let [lines, skipped] = [0, 0];
      for (let start = 0; start < buf.length; ) {
        const nl = buf.indexOf(10, start);
        const end = nl < 0 ? buf.length : nl;
        const got = keptOf(buf.toString('utf8', start, end));
        if (got) this.index(got.id, start, path === this.old);
        else if (buf.toString('utf8', start, end).trim()) skipped++;
        if (nl < 0) break;
        lines++;
        start = nl + 1;
      }
      if (path === this.file) [this.lines, this.torn, this.size] = [lines, buf.length > 0 && buf[buf.length - 1] !== 10, buf.length];
      saySkippedLines(path, skipped);
    }
  }

  keep(id: string, kept: KeptGeneration): void {
    if (this.ended) return this.keepUnwritten(id, JSON.stringify({ id, workspace: kept.workspace, key: kept.key, data: kept.data, batch: kept.batch }));
    this.pending.add(id, kept);
    this.flushing ??= setTimeout(() => this.flushLater(), GATHER_MS);
  }

  get(id: string): KeptGeneration | undefined {
    const line = this.pending.get(id) ?? this.writing?.get(id) ?? this.unwritten.get(id);
    if (line !== undefined) return keptOf(line, id)?.kept;
    let found: KeptGeneration | undefined;
    this.starts.find(id, (at, older) => {
      const text = lineAt(older ? this.old : this.file, at);
      found = text === undefined ? undefined : keptOf(text, id)?.kept;
      return found !== undefined;
    });
    return found;
  }

  /** Every generation kept, oldest first: each file read once, whole (for `GET /v1/activity`, not a hot path). */
  *all(): Iterable<KeptGeneration> {
    const files = new Map<boolean, Buffer | undefined>();
    for (const [at, older] of this.starts.entries()) {
      if (!files.has(older)) files.set(older, readOrNone(older ? this.old : this.file));
      const buf = files.get(older);
      if (!buf) continue;
      const end = buf.indexOf(10, at);
      const got = keptOf(buf.toString('utf8', at, end < 0 ? buf.length : end));
      if (got && !this.pending.has(got.id) && !this.writing?.has(got.id)) yield got.kept;
    }
    const writing = [...(this.writing?.entries() ?? [])].filter(([id]) => !this.pending.has(id)).map(([, line]) => line);
    for (const line of [...this.unwritten.values(), ...writing, ...[...this.pending.entries()].map(([, line]) => line)]) {
      const got = keptOf(line);
      if (got) yield got.kept;
    }
  }

  /**
   * Writes the generations kept since the last write, at once (writeSync: at the end, and for a caller
   * that reads the file next); after the write under way, if one is. A failed write (a full disk) is
   * said once, and they stay in memory.
   */
  flush(): void {
    if (this.flushing) clearTimeout(this.flushing);
    this.flushing = undefined;
    if (this.writing || this.ended || !(this.pending.size || this.unwritten.size)) return;
    const lines = this.take(true);
    try {
      const out = this.bytesOf(lines);
      this.landed(lines, out, writeSync(this.fd!, out.bytes, 0, out.used));
    } catch (err) {
      this.failed(lines, err);
    }
  }

  /**
   * Writes the generations kept since the last write with write(2) on libuv's threads, one write at a
   * time: those kept meanwhile go in the next. Written on the event loop, every open answer waited
   * for each (379 writes per 1,000 priced streamed requests, 8 at a time: strace).
   */
  private flushLater(): void {
    if (this.flushing) clearTimeout(this.flushing);
    this.flushing = undefined;
    if (this.writing || !this.pending.size) return;
    const lines = this.take(!storageFailing());
    let out: Bytes;
    try {
      out = this.bytesOf(lines);
    } catch (err) {
      return this.failed(lines, err);
    }
    this.writing = lines;
    this.writes++;
    write(this.fd!, out.bytes, 0, out.used, null, (err, written) => {
      this.writing = undefined;
      try {
        if (err) throw err;
        this.landed(lines, out, written);
      } catch (e) {
        this.failed(lines, e);
      }
      if (this.ending) this.finish();
      else if (this.pending.size) this.flushing ??= setTimeout(() => this.flushLater(), GATHER_MS);
      const wrote = this.wrote;
      this.wrote = undefined;
      wrote?.settle();
    });
  }

  /**
   * The lines to write next: with `retry`, those a full disk refused before first (kept in memory only, a
   * stop lost them: charged answers `GET /v1/generation` no longer found), then those kept since. Not
   * retried each turn while writes of the state still fail: each would copy up to `max` lines again.
   */
  private take(retry: boolean): PendingLines {
    const lines = this.pending;
    this.pending = new PendingLines(lines.used);
    if (!retry || !this.unwritten.size) return lines;
    const all = new PendingLines(lines.used);
    for (const [id, line] of this.unwritten) if (!lines.has(id)) all.addLine(id, line);
    for (const [id, line] of lines.entries()) all.addLine(id, line);
    this.unwritten.clear();
    return all;
  }

  /** Settles once the generations kept so far are written (or failed to be): their write started now if it waits for a turn's end; undefined when none is to be. */
  idle(): Promise<void> | undefined {
    if (!this.writing && !this.ended) this.flushLater();
    if (!this.writing) return undefined;
    if (!this.wrote) {
      let settle!: () => void;
      const done = new Promise<void>((resolve) => (settle = resolve));
      this.wrote = { done, settle };
    }
    return this.wrote.done;
  }

  /** The bytes of `lines`, one after another, and where each starts in them; the file turned over or opened first. */
  private bytesOf(lines: PendingLines): Bytes {
    if (this.lines >= this.max) {
      this.close();
      renameSync(this.file, this.old);
      [this.lines, this.torn] = [0, false];
      this.starts.rotate();
    }
    if (this.fd === undefined) {
      this.fd = openSync(this.file, 'a', 0o600);
      this.size = fstatSync(this.fd).size;
    }
    return lines.take(this.torn);
  }

  /** `lines` written (`written` bytes of them): each found where it starts; taken in part, cut back and refused. */
  private landed(lines: PendingLines, out: Bytes, written: number): void {
    // Taken in part (a full disk): cut back to the last whole line, or the next would join a torn one.
    if (written < out.used) {
      ftruncateSync(this.fd!, this.size);
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    }
    let i = 0;
    for (const id of lines.ids()) this.index(id, this.size + out.starts[i++]!);
    this.size += written;
    this.lines += lines.size;
    this.torn = false;
  }

  /** `lines` not written: kept in memory only, said once (a failure that is not the disk's is thrown). */
  private failed(lines: PendingLines, err: unknown): void {
    const why = storageFailure(failedWriteOf(err, this.file));
    if (!why) throw err;
    for (const [id, line] of lines.entries()) this.keepUnwritten(id, line);
    reportStorage(why, 'generations are kept in memory only');
  }

  /** Writes what is pending (after the write under way, if one is); nothing is written after (the state folder may be removed). */
  end(): void {
    this.ending = true;
    if (!this.writing) this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.flush();
    this.close();
    this.ended = true;
  }

  /** Where `id`'s line starts, as its newest: in the current file (or the older), no longer anywhere else; the oldest let go past `max`. */
  private index(id: string, at: number, older = false): void {
    this.unwritten.delete(id);
    this.starts.set(id, at, older);
  }

  private keepUnwritten(id: string, line: string): void {
    this.starts.delete(id);
    this.unwritten.delete(id);
    this.unwritten.set(id, line);
    if (this.unwritten.size > this.max) this.unwritten.delete(this.unwritten.keys().next().value!);
  }

  private close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** A file's bytes, or undefined when it cannot be read. */
function readOrNone(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

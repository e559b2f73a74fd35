import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isRecord } from '../../internal/shape.js';
import { KEEP } from './generation-log.js';
import { reportStorage, storageFailure } from './storage-failure.js';
import type { KeptGeneration } from './store-api.js';

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

/** The line that starts at byte `at` of `path` (to its newline or the file's end); undefined when the file is gone. */
function lineAt(path: string, at: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let buf = Buffer.allocUnsafe(4096);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, at + got);
      const nl = buf.subarray(got, got + n).indexOf(10);
      if (nl >= 0) return buf.toString('utf8', 0, got + nl);
      got += n;
      if (n === 0) return buf.toString('utf8', 0, got);
      if (got === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The generations log kept on disk, so `GET /v1/generation` finds them after a restart or a
 * kill -9: one JSON line each in `<dir>/generations.jsonl`, gathered over one turn of the event loop
 * and written with one write(2) (no fsync: a kill -9 loses at most that turn's, a machine crash what
 * the disk had not got). Once the file holds `limit` lines it becomes `generations.old.jsonl` and a new
 * one begins: the two hold the newest `limit` at least, never more than twice that, and nothing is
 * ever rewritten. In memory only where each line starts, by id (a generation read back from its
 * line when asked for): a record kept in memory for each answer made every young-generation
 * collection copy it, on the gateway's hot path.
 */
export class GenerationFile {
  private readonly file: string;
  private readonly old: string;
  private fd: number | undefined;
  private lines = 0;
  private size = 0;
  /** Where each line starts, by id: in `file`, and in `old`; the newest `max` of them, oldest first. */
  private current = new Map<string, number>();
  private older = new Map<string, number>();
  /** Lines kept since the last write, by id. */
  private pending = new Map<string, string>();
  /** Lines a write failed to keep (a full disk), or kept once ended: in memory only, the newest `max`. */
  private readonly unwritten = new Map<string, string>();
  private flushing: NodeJS.Immediate | undefined;
  /** The file ends in a line cut short (a crash, a full disk): the next write begins a line of its own. */
  private torn = false;

  private ended = false;

  /** `name`: the file's (`generations`; a batch's requests' in `batch-generations`). */
  constructor(dir: string, private readonly max = KEEP, name = 'generations') {
    this.file = join(dir, `${name}.jsonl`);
    this.old = join(dir, `${name}.old.jsonl`);
    for (const path of [this.old, this.file]) {
      if (!existsSync(path)) continue;
      const buf = readFileSync(path);
      let lines = 0;
      for (let start = 0; start < buf.length; ) {
        const nl = buf.indexOf(10, start);
        const end = nl < 0 ? buf.length : nl;
        const got = keptOf(buf.toString('utf8', start, end));
        if (got) this.index(path === this.file ? this.current : this.older, got.id, start);
        if (nl < 0) break;
        lines++;
        start = nl + 1;
      }
      if (path === this.file) [this.lines, this.torn, this.size] = [lines, buf.length > 0 && buf[buf.length - 1] !== 10, buf.length];
    }
  }

  keep(id: string, kept: KeptGeneration): void {
    // Kept without its newline: one flat string, whose byte length is read without copying it (a line
    // with `\n` appended was a second string that Buffer.byteLength copied whole, per request).
    const line = JSON.stringify({ id, workspace: kept.workspace, key: kept.key, data: kept.data, batch: kept.batch });
    if (this.ended) return this.keepUnwritten(id, line);
    this.pending.delete(id);
    this.pending.set(id, line);
    this.flushing ??= setImmediate(() => this.flush());
  }

  get(id: string): KeptGeneration | undefined {
    const line = this.pending.get(id) ?? this.unwritten.get(id);
    if (line !== undefined) return keptOf(line, id)?.kept;
    const inFile = this.current.get(id);
    const at = inFile ?? this.older.get(id);
    if (at === undefined) return undefined;
    const text = lineAt(inFile !== undefined ? this.file : this.old, at);
    return text === undefined ? undefined : keptOf(text, id)?.kept;
  }

  /** Every generation kept, oldest first: each file read once, whole (for `GET /v1/activity`, not a hot path). */
  *all(): Iterable<KeptGeneration> {
    for (const [path, index] of [[this.old, this.older], [this.file, this.current]] as const) {
      if (!index.size) continue;
      let buf: Buffer;
      try {
        buf = readFileSync(path);
      } catch {
        continue;
      }
      for (const [id, at] of index) {
        if (this.pending.has(id)) continue;
        const end = buf.indexOf(10, at);
        const got = keptOf(buf.toString('utf8', at, end < 0 ? buf.length : end), id);
        if (got) yield got.kept;
      }
    }
    for (const line of [...this.unwritten.values(), ...this.pending.values()]) {
      const got = keptOf(line);
      if (got) yield got.kept;
    }
  }

  /** Writes the generations kept since the last write; a failed write (a full disk) is said once, and they stay in memory. */
  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (!this.pending.size) return;
    const lines = this.pending;
    this.pending = new Map();
    try {
      if (this.lines >= this.max) {
        this.close();
        renameSync(this.file, this.old);
        [this.lines, this.torn] = [0, false];
        this.older = this.current;
        this.current = new Map();
      }
      if (this.fd === undefined) {
        this.fd = openSync(this.file, 'a', 0o600);
        this.size = fstatSync(this.fd).size;
      }
      let text = this.torn ? '\n' : '';
      let bytes = text.length;
      for (const line of lines.values()) {
        text += `${line}\n`;
        bytes += Buffer.byteLength(line) + 1;
      }
      const written = writeSync(this.fd, text);
      // Taken in part (a full disk): cut back to the last whole line, or the next would join a torn one.
      if (written < bytes) {
        ftruncateSync(this.fd, this.size);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }
      let at = this.size + (this.torn ? 1 : 0);
      for (const [id, line] of lines) {
        this.index(this.current, id, at);
        at += Buffer.byteLength(line) + 1;
      }
      this.size += written;
      this.lines += lines.size;
      this.torn = false;
    } catch (err) {
      const why = storageFailure(failedWriteOf(err, this.file));
      if (!why) throw err;
      for (const [id, line] of lines) this.keepUnwritten(id, line);
      reportStorage(why, 'generations are kept in memory only');
    }
  }

  /** Writes what is pending; nothing is written after (the state folder may be removed). */
  end(): void {
    this.flush();
    this.close();
    this.ended = true;
  }

  /** Where `id`'s line starts, as its newest: in `into`, no longer anywhere else; the oldest let go past `max`. */
  private index(into: Map<string, number>, id: string, at: number): void {
    this.current.delete(id);
    this.older.delete(id);
    this.unwritten.delete(id);
    into.set(id, at);
    if (this.current.size + this.older.size > this.max) {
      const oldest = this.older.size ? this.older : this.current;
      oldest.delete(oldest.keys().next().value!);
    }
  }

  private keepUnwritten(id: string, line: string): void {
    this.current.delete(id);
    this.older.delete(id);
    this.unwritten.delete(id);
    this.unwritten.set(id, line);
    if (this.unwritten.size > this.max) this.unwritten.delete(this.unwritten.keys().next().value!);
  }

  private close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

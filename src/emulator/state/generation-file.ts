import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isRecord } from '../../internal/shape.js';
import { GenerationLog, KEEP } from './generation-log.js';
import { reportStorage, storageFailure } from './storage-failure.js';
import type { KeptGeneration } from './store-api.js';

/**
 * The generations log kept on disk too, so `GET /v1/generation` finds them after a restart or a
 * kill -9: one JSON line each in `<dir>/generations.jsonl`, gathered over one turn of the event loop
 * and written with one write(2) (no fsync: a kill -9 loses at most that turn's, a machine crash what
 * the disk had not got). Once the file holds `limit` lines it becomes `generations.old.jsonl` and a new
 * one begins: the two hold the newest `limit` at least, never more than twice that, and nothing is
 * ever rewritten.
 */
export class GenerationFile extends GenerationLog {
  private readonly file: string;
  private readonly old: string;
  private fd: number | undefined;
  private lines = 0;
  private size = 0;
  private pending: string[] = [];
  private flushing: NodeJS.Immediate | undefined;
  /** The file ends in a line cut short (a crash, a full disk): the next write begins a line of its own. */
  private torn = false;

  private ended = false;

  constructor(dir: string, private readonly max = KEEP) {
    super(max);
    this.file = join(dir, 'generations.jsonl');
    this.old = join(dir, 'generations.old.jsonl');
    for (const path of [this.old, this.file]) {
      if (!existsSync(path)) continue;
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n');
      if (path === this.file) [this.lines, this.torn] = [lines.length - 1, !text.endsWith('\n') && text !== ''];
      for (const line of lines) {
        let kept: unknown;
        try {
          kept = JSON.parse(line);
        } catch {
          continue; // an empty line, or one a full disk cut short
        }
        if (isRecord(kept) && typeof kept.id === 'string' && typeof kept.workspace === 'string' && isRecord(kept.data)) super.keep(kept.id, { workspace: kept.workspace, data: kept.data });
      }
    }
  }

  override keep(id: string, kept: KeptGeneration): void {
    super.keep(id, kept);
    if (this.ended) return;
    this.pending.push(`${JSON.stringify({ id, ...kept })}\n`);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Writes the generations kept since the last write; a failed write (a full disk) is said once, and they stay in memory. */
  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (!this.pending.length) return;
    const lines = this.pending;
    this.pending = [];
    try {
      if (this.lines >= this.max) {
        this.close();
        renameSync(this.file, this.old);
        [this.lines, this.torn] = [0, false];
      }
      if (this.fd === undefined) {
        this.fd = openSync(this.file, 'a', 0o600);
        this.size = fstatSync(this.fd).size;
      }
      const text = (this.torn ? '\n' : '') + lines.join('');
      const written = writeSync(this.fd, text);
      // Taken in part (a full disk): cut back to the last whole line, or the next would join a torn one.
      if (written < Buffer.byteLength(text)) {
        ftruncateSync(this.fd, this.size);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }
      this.size += written;
      this.lines += lines.length;
      this.torn = false;
    } catch (err) {
      const why = storageFailure(failedWriteOf(err, this.file));
      if (!why) throw err;
      reportStorage(why, 'generations are kept in memory only');
    }
  }

  /** Writes what is pending; nothing is written after (the state folder may be removed). */
  end(): void {
    this.flush();
    this.close();
    this.ended = true;
  }

  private close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

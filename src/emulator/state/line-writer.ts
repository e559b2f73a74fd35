import { close, ftruncateSync, write } from 'node:fs';
import { failedWriteOf } from '../../internal/system-errors.js';
import { crashPoint } from './fsutil.js';
import { storageFailure } from './storage-failure.js';

/** Lines for one file, written together with one write(2). */
interface Lines {
  fd: number;
  path: string;
  text: string;
  /** The sequence number of its last line. */
  last: number;
  /** Where the file ends before it, when it is the first write to its file (one opened since). */
  from?: number;
  /** Settles once written (or failed): made only when something waits for it. */
  done?: Promise<void>;
  settle?: () => void;
}

/**
 * Writes lines to open files with write(2) on libuv's threads, one write at a time and in order:
 * lines given while one is under way go together in the next. An fd is closed only after the lines
 * for it: closed before, a write under way could land in a file opened since under its number.
 */
export class LineWriter {
  private readonly queue: (Lines | { close: number })[] = [];
  private writing = false;
  /** The newest lines not yet written. */
  private newest: Lines | undefined;
  /** Where the file being written to ends. */
  private end = 0;

  /** `failed`: lines up to `seq` not written (a full disk), and why. */
  constructor(private readonly failed: (why: string, seq: number) => void) {}

  /** Writes `line` (numbered `seq`) to `fd`; `from`: where the file ends, for the first line since it was opened. */
  add(fd: number, path: string, line: string, seq: number, from?: number): void {
    const newest = this.newest;
    if (newest && newest.fd === fd && newest !== this.queue[0] && from === undefined) {
      newest.text += line;
      newest.last = seq;
      return;
    }
    this.queue.push((this.newest = { fd, path, text: line, last: seq, from }));
    this.writeNext();
  }

  /** Settles once every line given so far is written (or failed to be); undefined when none is waiting. */
  unwritten(): Promise<void> | undefined {
    const newest = this.newest;
    if (!newest) return undefined;
    return (newest.done ??= new Promise<void>((resolve) => (newest.settle = resolve)));
  }

  /** Closes `fd` once the lines given for it are written. */
  closeAfter(fd: number): void {
    this.queue.push({ close: fd });
    this.writeNext();
  }

  private writeNext(): void {
    while (!this.writing && this.queue.length) {
      const next = this.queue[0]!;
      if ('close' in next) {
        this.queue.shift();
        close(next.close, () => {});
        continue;
      }
      this.writing = true;
      if (next.from !== undefined) this.end = next.from;
      write(next.fd, next.text, (err, written) => this.wrote(next, err, written));
    }
  }

  private wrote(lines: Lines, err: NodeJS.ErrnoException | null, written: number): void {
    this.queue.shift();
    this.writing = false;
    if (this.newest === lines) this.newest = undefined;
    try {
      if (err) throw err;
      // A disk that had room for part of it: the part is cut off, or the next line would join it and both be lost.
      if (written < Buffer.byteLength(lines.text)) {
        ftruncateSync(lines.fd, this.end);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }
      this.end += written;
      crashPoint('journal-line-written');
    } catch (e) {
      // One not a disk's refusal (none is known) is said all the same, its lines kept in memory as for one.
      this.failed(storageFailure(failedWriteOf(e, lines.path)) ?? (e instanceof Error ? e.message : String(e)), lines.last);
    }
    lines.settle?.();
    this.writeNext();
  }
}

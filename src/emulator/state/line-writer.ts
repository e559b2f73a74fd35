import { close, ftruncateSync, writeSync } from 'node:fs';
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
}

/**
 * Writes lines to open files with write(2) on the event loop, in order: the lines given since the
 * last write go together in the next, made when something waits for them (`flush()`: an answer's
 * end, a request's hold) or else once the loop's turn is over (setImmediate). Written on libuv's
 * threads instead, an answer's end waited for the thread's write and the loop's next turn to learn
 * of it: under load, half of the gateway's slowest 1% of streams ended within 1 ms of such a write
 * coming back late.
 */
export class LineWriter {
  /** The lines not yet written. */
  private newest: Lines | undefined;
  private later: NodeJS.Immediate | undefined;
  /** Where the file being written to ends. */
  private end = 0;

  /** `failed`: lines up to `seq` not written (a full disk), and why. */
  constructor(private readonly failed: (why: string, seq: number) => void) {}

  /** Writes `line` (numbered `seq`) to `fd`; `from`: where the file ends, for the first line since it was opened. */
  add(fd: number, path: string, line: string, seq: number, from?: number): void {
    const newest = this.newest;
    if (newest && newest.fd === fd && from === undefined) {
      newest.text += line;
      newest.last = seq;
      return;
    }
    if (newest) this.flush();
    this.newest = { fd, path, text: line, last: seq, from };
    this.later ??= setImmediate(() => {
      this.later = undefined;
      this.flush();
    });
  }

  /** Writes every line given so far (a failure said through `failed`, as the constructor's). */
  flush(): void {
    const lines = this.newest;
    if (!lines) return;
    this.newest = undefined;
    if (lines.from !== undefined) this.end = lines.from;
    try {
      const written = writeSync(lines.fd, lines.text);
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
  }

  /** Closes `fd` once the lines given for it are written. */
  closeAfter(fd: number): void {
    if (this.newest?.fd === fd) this.flush();
    close(fd, () => {});
  }
}

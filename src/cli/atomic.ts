import { createWriteStream, renameSync, rmSync, type WriteStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * A file written as a whole or not at all: data goes to a temp file in the same folder,
 * which is renamed over the target only on commit. An abort (or a crash) never leaves a
 * half file at the target, and an existing file there stays as it was.
 */
export class AtomicFile {
  readonly tempPath: string;
  private readonly stream: WriteStream;
  private done = false;
  private readonly cleanup = () => this.abortSync();

  constructor(readonly path: string, mode = 0o644) {
    this.tempPath = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
    this.stream = createWriteStream(this.tempPath, { mode });
    process.once('exit', this.cleanup);
  }

  write(chunk: string | Uint8Array): Promise<void> | void {
    if (!this.stream.write(chunk)) {
      return new Promise((resolve, reject) => {
        const settle = (err?: Error) => {
          this.stream.off('error', settle);
          this.stream.off('drain', onDrain);
          this.stream.off('close', onClose);
          if (err) reject(err);
          else resolve();
        };
        const onDrain = () => settle();
        // Aborted while waiting: the stream closes without draining.
        const onClose = () => settle(this.done ? Object.assign(new Error('interrupted'), { name: 'AbortError' }) : undefined);
        this.stream.once('error', settle);
        this.stream.once('drain', onDrain);
        this.stream.once('close', onClose);
      });
    }
  }

  async commit(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    });
    renameSync(this.tempPath, this.path);
    this.done = true;
    process.off('exit', this.cleanup);
  }

  abortSync(): void {
    if (this.done) return;
    this.done = true;
    this.stream.destroy();
    rmSync(this.tempPath, { force: true });
    process.off('exit', this.cleanup);
  }
}

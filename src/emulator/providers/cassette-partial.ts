/** A stream's cassette written as it comes: `<file>.partial`, so a gateway killed -9 mid-stream leaves what it had relayed. */
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { hiddenKey } from './key-scrub.js';

/** How long events gather before they are appended: a stream shorter than this writes nothing more. */
const EVERY_MS = 50;
export const PARTIAL = '.partial';

/**
 * A stream's recording under way, in JSON lines: the cassette so far (`"partial"` saying why it is one,
 * no `chunks`), then one `{after_ms, data}` line per event. Appended every EVERY_MS while the stream
 * lasts; removed once the whole cassette is written, or the exchange is not kept.
 */
export class PartialCassette {
  private lines: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private handle: FileHandle | undefined;
  private failed = false;

  constructor(
    private readonly path: string,
    private readonly head: () => unknown,
    private readonly scrub: (text: string) => string,
  ) {}

  /** An event relayed: appended within EVERY_MS. */
  add<T>(chunk: T): T {
    this.lines.push(JSON.stringify(chunk));
    this.timer ??= setTimeout(() => this.append(), EVERY_MS).unref();
    return chunk;
  }

  private append(): void {
    this.timer = undefined;
    const lines = this.lines.splice(0);
    this.chain = this.chain.then(async () => {
      if (this.failed) return;
      try {
        if (!this.handle) {
          this.handle = await open(this.path, 'w');
          lines.unshift(JSON.stringify({ partial: 'recording under way: a gateway stopped mid-stream (kill -9) left it; never replayed', ...(this.head() as object) }));
        }
        await this.handle.write(this.scrub(`${lines.join('\n')}\n`));
      } catch (err) {
        this.failed = true;
        process.stderr.write(`record: partial cassette ${this.path} not written: ${(err as Error).message}\n`);
      }
    });
  }

  /** The stream ended (its whole cassette written before, or not kept): the partial file goes. */
  end(): Promise<void> {
    clearTimeout(this.timer);
    this.lines = [];
    return this.chain.then(async () => {
      if (!this.handle) return;
      await this.handle.close().catch(() => undefined);
      await rm(this.path, { force: true }).catch((err: Error) => void process.stderr.write(`record: partial cassette ${this.path} not removed: ${err.message}\n`));
    });
  }
}

/** A recording's partial file, as it comes: `add` an event (`field` of the whole, so not in its head); `end` it once, after the deck's writes so far (`after`). */
export function partialFor(dir: string, file: string, cassette: { response: object }, field: 'chunks' | 'audio', scrub: (text: string) => string, after: (end: () => Promise<void>) => void) {
  const partial = new PartialCassette(join(dir, `${file}${PARTIAL}`), () => ({ ...cassette, response: { ...cassette.response, [field]: undefined } }), scrub);
  let over = false;
  return { add: <T>(event: T): T => partial.add(event), end: () => void (over || ((over = true), after(() => partial.end()))) };
}

/**
 * Partial cassettes a killed gateway left in `dir`, said on stderr at the start: `--replay` answers
 * none of them (the request is a miss); `--record` and `--record-missing` remove them, so the request
 * is recorded again (`replay`: whether the run only replays, and writes nothing).
 */
export function partialLeftovers(dir: string, replay: boolean): void {
  for (const file of readdirSync(dir).sort()) {
    const path = join(dir, file);
    if (!file.endsWith(`.json${PARTIAL}`)) continue;
    const whole = existsSync(path.slice(0, -PARTIAL.length));
    if (replay) {
      if (!whole) process.stderr.write(`replay: ${path} is a partial recording (its gateway was stopped mid-stream): not replayed; router serve --record-missing would record it again\n`);
      continue;
    }
    rmSync(path, { force: true });
    if (!whole) process.stderr.write(`record: ${path} was a partial recording (its gateway was stopped mid-stream): removed, to be recorded again\n`);
  }
}

/** An upstream that echoes the key it was sent (in a refusal) must not put it in a file people share. */
export const scrubbed = (secret: string | undefined, text: string) => (hiddenKey(secret) ? text.replaceAll(secret, '[provider key]') : text);

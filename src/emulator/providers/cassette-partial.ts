/** A stream's cassette written as it comes: `<file>.<pid>@<start>.partial` (ownName), so a gateway killed -9 mid-stream leaves what it had relayed. */
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pidNamespace, sameProcessAlive } from '../../internal/process.js';
import { ownName } from './cassette-folder.js';
import { maskKeyStarts, type KeyForm } from './key-scrub.js';
import type { CassetteMode } from './cassette-format.js';

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
  /** This writer's own name of the file (its pid and start in it): another gateway's start leaves it while this one runs. */
  private readonly own: { name: string; release: () => void };
  private readonly path: string;

  constructor(
    whole: string,
    private readonly head: () => unknown,
    private readonly scrub: (text: string) => string,
  ) {
    this.own = ownName(whole, PARTIAL);
    this.path = this.own.name;
  }

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
      if (this.handle) {
        await this.handle.close().catch(() => undefined);
        await rm(this.path, { force: true }).catch((err: Error) => void process.stderr.write(`record: partial cassette ${this.path} not removed: ${err.message}\n`));
      }
      this.own.release();
    });
  }
}

/** A recording's partial file, as it comes: `add` an event (`field` of the whole, so not in its head); `end` it once, after the deck's writes so far (`after`). */
export function partialFor(dir: string, file: string, cassette: { response: object }, field: 'chunks' | 'audio', scrub: (text: string) => string, after: (end: () => Promise<void>) => void) {
  const partial = new PartialCassette(join(dir, file), () => ({ ...cassette, response: { ...cassette.response, [field]: undefined } }), scrub);
  let over = false;
  return { add: <T>(event: T): T => partial.add(event), end: () => void (over || ((over = true), after(() => partial.end()))) };
}

/** A cassette's partial or temp file: `<file>.json.<pid>[@<start>[~<pidns>]][-n].partial` or `.tmp` (ownName; no pid: an older version's; no start or namespace: an older version's, or where /proc is not read). */
const LEFTOVER = /^(.*\.json)(?:\.(\d+)(?:@(\d+))?(?:~(\d+))?(?:-\d+)?)?(\.partial|\.tmp)$/;

/**
 * Partial cassettes a killed gateway left in `dir`, said on stderr at the start: `--replay` answers
 * none of them (the request is a miss); `--record` and `--record-missing` remove them, so the request
 * is recorded again, and the temp files of cassettes it was writing (`mode` 'replay': the run only
 * replays, and writes nothing). Those of a gateway still running (its pid and start in the name:
 * another recording into this folder, or another gateway of this process) are its own, still
 * written: left alone, and `--replay` (with `--record-missing` or not), which reads the folder only
 * now, says it once per file. A pid alone is not the writer: a process started later may have been given a killed gateway's pid.
 */
export function partialLeftovers(dir: string, mode: CassetteMode): void {
  const replay = mode === 'replay';
  for (const file of readdirSync(dir).sort()) {
    const [, whole, pid, start, ns, kind] = LEFTOVER.exec(file) ?? [];
    if (!whole) continue;
    const path = join(dir, file);
    const kept = existsSync(join(dir, whole));
    // A writer of another pid namespace (another container) cannot be looked up from here: taken for running, left alone.
    const elsewhere = ns !== undefined && ns !== pidNamespace();
    if (pid && (elsewhere || sameProcessAlive(Number(pid), start))) {
      const under = `${path} is a recording under way by another gateway (process ${pid}${elsewhere ? ' of another pid namespace' : ''}): not replayed (a gateway reads its cassettes when it starts)`;
      if (kind === '.partial' && !kept && mode !== 'record') process.stderr.write(replay ? `replay: ${under}; a --replay started after that recording ends replays it\n` : `record: ${under}; a request for it is recorded again here\n`);
      continue;
    }
    if (kind === '.tmp') {
      if (pid && !replay) rmSync(path, { force: true });
      continue;
    }
    if (replay) {
      if (!kept) process.stderr.write(`replay: ${path} is a partial recording (its gateway was stopped mid-stream): not replayed; router serve --record-missing would record it again\n`);
      continue;
    }
    rmSync(path, { force: true });
    if (!kept) process.stderr.write(`record: ${path} was a partial recording (its gateway was stopped mid-stream): removed, to be recorded again\n`);
  }
}

/** An upstream that echoes the key it was sent (in a refusal, whole or cut short) must not put it in a file people share: `forms`, keyFormList(). */
export const scrubbed = (forms: readonly KeyForm[], text: string) => maskKeyStarts(text, forms);

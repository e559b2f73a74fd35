import { closeSync, constants, createWriteStream, openSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import { isatty } from 'node:tty';
import type { Writable } from 'node:stream';
import { basename, dirname, join, resolve } from 'node:path';
import { randomHex } from '../../internal/random-hex.js';
import { isBlank } from '../../internal/blank.js';
import { CliError, EXIT } from '../exit-codes.js';
import { describeCode, isPathProblem, isSystemError } from '../../internal/system-errors.js';
import { interrupted } from '../run.js';
import { processAlive } from '../../internal/process.js';

const TEMP_PREFIX = '.router-tmp-';

function failure(err: unknown, path: string): Error {
  if (err instanceof CliError) return err;
  if (isSystemError(err)) return new CliError(`cannot write ${path}: ${describeCode(err.code)}`, isPathProblem(err.code) ? EXIT.USAGE : EXIT.FAILURE);
  return err as Error;
}

/** Where a path that names no file is made: the file a dangling link names (as the shell's `>` makes it), else the path. */
function linkTarget(path: string): string {
  let target = path;
  // A loop of links never comes here (stat refused it: ELOOP); 40 hops is the kernel's bound too.
  for (let hops = 0; hops < 40; hops++) {
    try {
      target = resolve(dirname(target), readlinkSync(target));
    } catch {
      return target;
    }
  }
  return target;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Removes temp files that an earlier run, killed before it could clean up, left in `dir`. */
function sweepStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/\.(\d+)\.[0-9a-f]+$/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !processAlive(pid)) rmSync(join(dir, name), { force: true });
  }
}

/** Whether two paths name one file (links followed); false when either does not exist. */
export function sameFile(a: string, b: string): boolean {
  const x = statOrUndefined(a);
  const y = statOrUndefined(b);
  return !!x && !!y && x.dev === y.dev && x.ino === y.ino;
}

/** An output that is one of the command's own input files, under any name: writing it would replace that input. */
export function refuseOverInput(flag: string, output: string, inputs: readonly (string | undefined)[]): void {
  const input = inputs.find((i) => i !== undefined && i !== '-' && sameFile(output, i));
  if (input !== undefined) throw new CliError(`${flag} ${output} is the input file ${input}: the output would replace it; give another file`, EXIT.USAGE);
}

/** Whether `path` names a terminal (/dev/tty, /dev/stdout or /dev/pts/N of one); a device that cannot be opened is none. */
export function isTerminalPath(path: string): boolean {
  if (!statOrUndefined(path)?.isCharacterDevice()) return false;
  let fd: number | undefined;
  try {
    // O_NOCTTY: looking at a terminal never makes it this process's controlling one.
    fd = openSync(path, constants.O_WRONLY | constants.O_NOCTTY);
    return isatty(fd);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Where a command writes its output (`--results`, `speak -o`, `/save`). Opened before any request
 * is sent, so a bad path costs nothing.
 * - A regular file (or a path that does not exist yet) is written atomically: a temp file in the
 *   same folder, renamed over the target on commit; an abort or a crash never leaves a half file
 *   there, and an existing file stays as it was. Temp files of killed runs are swept on the next.
 * - A symlink is followed: the file it points to is replaced, the link stays.
 * - A device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe) is written directly: it is
 *   never replaced by a file.
 */
export class OutputFile {
  private readonly stream: Writable;
  private readonly tempPath: string | undefined;
  private readonly target: string;
  private done = false;
  private error: Error | undefined;
  private readonly cleanup = () => this.abortSync();

  private constructor(readonly path: string, mode: number) {
    if (isBlank(path)) throw new CliError('cannot write to an empty path: give a file name', EXIT.USAGE);
    if (path.endsWith('/')) throw new CliError(`cannot write ${path}: it ends in / as a folder does; give a file name`, EXIT.USAGE);
    const st = statOrUndefined(path);
    if (st?.isDirectory()) throw new CliError(`cannot write ${path}: is a folder`, EXIT.USAGE);
    const dir = dirname(resolve(path));
    const parent = statOrUndefined(dir);
    if (!parent) throw new CliError(`cannot write ${path}: folder ${dirname(path)} does not exist`, EXIT.USAGE);
    if (!parent.isDirectory()) throw new CliError(`cannot write ${path}: ${dirname(path)} is not a folder`, EXIT.USAGE);
    let fd: number;
    if (st && !st.isFile()) {
      this.target = path;
      fd = openSync(path, 'w');
    } else {
      this.target = st ? realpathSync(path) : linkTarget(path);
      const targetDir = dirname(this.target);
      sweepStale(targetDir);
      this.tempPath = join(targetDir, `${TEMP_PREFIX}${basename(this.target)}.${process.pid}.${randomHex(3)}`);
      fd = openSync(this.tempPath, 'wx', mode);
      process.once('exit', this.cleanup);
    }
    // A named pipe is written as stdout is, by the event loop: a write to a reader that stops
    // reading then never blocks a thread that exit (and Ctrl-C) would wait on.
    this.stream = st?.isFIFO() ? new Socket({ fd, readable: false, writable: true }) : createWriteStream('', { fd });
    this.stream.on('error', (err) => {
      this.error = failure(err, path);
    });
  }

  /** Opens the output or fails with one line naming the user's path (exit 2 for a bad path). */
  static open(path: string, mode = 0o644): OutputFile {
    try {
      return new OutputFile(path, mode);
    } catch (err) {
      throw failure(err, path);
    }
  }

  write(chunk: string | Uint8Array): Promise<void> | void {
    if (this.error) throw this.error;
    if (this.stream.write(chunk)) return;
    return new Promise((resolvePromise, reject) => {
      const settle = () => {
        this.stream.off('error', settle);
        this.stream.off('drain', settle);
        this.stream.off('close', settle);
        if (this.error) reject(this.error);
        else if (this.done) reject(interrupted());
        else resolvePromise();
      };
      this.stream.once('error', settle);
      this.stream.once('drain', settle);
      // Aborted while waiting: the stream closes without draining.
      this.stream.once('close', settle);
    });
  }

  async commit(): Promise<void> {
    await new Promise<void>((resolvePromise, reject) => {
      // The callback may run before the 'error' event (a full device fails on the last write).
      this.stream.end((err?: Error | null) => {
        if (err && !this.error) this.error = failure(err, this.path);
        if (this.error) reject(this.error);
        else resolvePromise();
      });
      this.stream.once('error', () => reject(this.error));
    }).catch((err) => {
      this.abortSync();
      throw err;
    });
    try {
      if (this.tempPath) renameSync(this.tempPath, this.target);
    } catch (err) {
      this.abortSync();
      throw failure(err, this.path);
    }
    this.done = true;
    process.off('exit', this.cleanup);
  }

  abortSync(): void {
    if (this.done) return;
    this.done = true;
    this.stream.destroy();
    if (this.tempPath) rmSync(this.tempPath, { force: true });
    process.off('exit', this.cleanup);
  }
}

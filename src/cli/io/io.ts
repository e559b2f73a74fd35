import { hideable, hideSecrets, redactValue } from '../../internal/hide-secrets.js';
import { knownKeys } from '../../config/known-keys.js';
import { MarkedKeys } from '../../internal/key-marks.js';
import type { Readable, Writable } from 'node:stream';
import { isatty } from 'node:tty';
import type { FlagValues } from '../flags/flags.js';
import type { GLOBAL_FLAGS } from '../flags/global-flags.js';
import { visible } from '../../internal/visible.js';
import { switchOn } from '../../internal/env-switch.js';
import { JqQueue } from './jq-queue.js';
import { drained } from './drained.js';

/** The shortest time between two writes of streamed text to stdout (a person sees no delay under ~15 ms). */
const STREAM_WRITE_GAP_MS = 10;

/** Decides what goes where (gh's iostreams): data to stdout; progress, warnings and color only on a TTY. */
export type GlobalFlags = FlagValues<typeof GLOBAL_FLAGS>;

export type OutStream = Writable & { isTTY?: boolean; columns?: number };
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/** The process's streams and environment, injected so that commands run in-process in tests. */
export interface Streams {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
  env: NodeJS.ProcessEnv;
  /** Overrides of the streams' own TTY facts (tests pretend to be a terminal). */
  tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  /** stdin's file descriptor when it is the process's own: looked at, and a file read, without building the stream. */
  stdinFd?: number;
}

export function stdinIsTerminal(streams: Streams): boolean {
  const fd = streams.stdinFd;
  // For a file, process.stdin would be a file stream (its modules, ~2 ms) built only to say no.
  return streams.tty?.stdin ?? (fd === undefined ? !!streams.stdin.isTTY : isatty(fd));
}

export function processStreams(): Streams {
  return {
    // Made on first use: process.stdin builds a stream (and loads its modules), ~7 ms of every start.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    stdinFd: 0,
  };
}

/** Milliseconds, monotonic (the global `performance` loads node:perf_hooks on first use, ~1 ms). */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** What commands made on the service, by the stdout that was to carry its id (see IO.made). */
const madeThings = new WeakMap<object, string[]>();

/** Longest `error:` line: an input quoted whole (a 10,000-letter id) would bury the words around it. */
const MAX_ERROR_LINE = 1000;

export class IO {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly env: NodeJS.ProcessEnv;
  readonly stdoutTTY: boolean;
  readonly stderrTTY: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
  private readonly noInput: boolean;
  /** What turned stdin off (--no-stdin, ROUTER_NO_STDIN), when it is: no command reads it then. */
  readonly noStdin: string | undefined;
  /** Color on stdout. */
  readonly color: boolean;
  /** Color on stderr. */
  readonly errColor: boolean;
  /** Text went to stdout on a terminal and its last line is still open (an error must start a new one). */
  private openLine = false;
  readonly secrets: string[] = [];
  private known?: string[];
  /** The marks of keys kept in the keychain (src/internal/key-marks.ts): a key one finds in a text becomes a secret. */
  readonly marked = new MarkedKeys((key) => this.addSecret(key));
  /** Every string to stdout has the secrets hidden (a command printing kept prompts and answers: define.ts). */
  hidesKeys = false;
  /** Aborted by Ctrl-C (set by the command wrapper): a read of input ends on it. */
  interrupt?: AbortSignal;
  /** Clears what is drawn on the terminal and is no output (a spinner): called before the next write to stdout or stderr. */
  transient?: () => void;

  constructor(
    flags: GlobalFlags = {},
    private readonly streams: Streams = processStreams(),
  ) {
    this.stdout = streams.stdout;
    this.stderr = streams.stderr;
    this.env = streams.env;
    this.stdoutTTY = streams.tty?.stdout ?? !!this.stdout.isTTY;
    this.stderrTTY = streams.tty?.stderr ?? !!this.stderr.isTTY;
    this.quiet = !!flags.quiet;
    this.verbose = !!flags.verbose;
    this.noInput = flags.input === false || switchOn(this.env.ROUTER_NO_INPUT);
    this.noStdin = flags.stdin === false ? '--no-stdin' : switchOn(this.env.ROUTER_NO_STDIN) ? 'ROUTER_NO_STDIN is set' : undefined;
    const env = this.env;
    const decide = (tty: boolean) => {
      if (flags.color === false || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return false;
      if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
      return tty && env.TERM !== 'dumb';
    };
    this.color = decide(this.stdoutTTY);
    this.errColor = decide(this.stderrTTY);
  }

  /** stdin, and the facts about it, looked at only by the commands that read it (see processStreams). */
  get stdin(): InStream { return this.streams.stdin; }

  get stdinTTY(): boolean { return stdinIsTerminal(this.streams); }

  get stdinFd(): number | undefined { return this.streams.stdinFd; }

  /** Prompts are allowed: stdin is a terminal and neither --no-input nor ROUTER_NO_INPUT says otherwise. */
  get canPrompt(): boolean {
    return !this.noInput && this.stdinTTY;
  }

  /** Registers a secret so that no message this process prints can carry it; one under 8 characters is not (it would hide words). */
  addSecret(secret: string | undefined): void {
    if (hideable(secret) && !this.secrets.includes(secret)) this.secrets.push(secret);
  }

  redact(text: string): string {
    this.marked.learn(text);
    return hideSecrets(text, this.secrets);
  }

  /** Every key the run knows without reading one (known-keys.ts; marks too), read at the first write to stderr. */
  private knownNow(): string[] {
    const read = this.known ? undefined : knownKeys(this.env);
    if (read) this.marked.add(read.marks);
    return (this.known ??= read!.keys.filter(hideable));
  }

  /** Width of the terminal on stdout, or undefined when stdout is not one. */
  get columns(): number | undefined {
    // A terminal that reports 0 columns (some CI ptys, a serial console) is taken as 80 wide.
    return this.stdoutTTY ? this.stdout.columns || 80 : undefined;
  }

  out(data: string | Uint8Array): boolean {
    this.transient?.();
    if (this.hidesKeys && typeof data === 'string') data = this.redact(data);
    if (this.stdoutTTY && data.length > 0) {
      const last = typeof data === 'string' ? data.charCodeAt(data.length - 1) : data[data.length - 1];
      this.openLine = last !== 10;
    }
    return this.stdout.write(data);
  }

  /**
   * Records a thing that now exists (a batch, a job) whose id is going to stdout: should stdout
   * fail (a full disk, a closed pipe), the error names it, so that the id is never lost.
   */
  made(what: string): void {
    const list = madeThings.get(this.stdout) ?? [];
    list.push(what);
    madeThings.set(this.stdout, list);
  }

  /** The things recorded with made() by any IO on this stdout. */
  get madeSoFar(): readonly string[] {
    return madeThings.get(this.stdout) ?? [];
  }

  /** `--json FIELDS` and `--jq`, set by the command runner. */
  jsonShape: { fields?: string[]; jq?: string; select?: (value: unknown, fields: string[]) => unknown } = {};
  /** The flag that asked for JSON, as a refusal names it: --jq implies --json. */
  get jsonFlag(): string {
    return this.jsonShape.jq === undefined ? '--json' : '--jq';
  }
  /** Values held for --jq, and its runs over them (jq-queue.ts). */
  private jqQueue?: JqQueue;
  private shaped(value: unknown): unknown {
    const { fields, select } = this.jsonShape;
    // Every secret the run knows, hidden in the values before they are JSON text (where a `"` in a key is `\"`).
    if (this.marked.marks.length) this.marked.learn(JSON.stringify(value) ?? '');
    value = redactValue(value, this.secrets);
    return fields && select ? select(value, fields) : value;
  }

  json(value: unknown): void {
    if (this.jsonShape.jq) this.holdForJq(value);
    else this.out(`${JSON.stringify(this.shaped(value), null, this.stdoutTTY ? 2 : undefined)}\n`);
  }

  jsonl(value: unknown): boolean { return this.out(this.jsonLine(value)); }

  /** One value as a JSON line (shaped by --json FIELDS); empty when --jq holds it for later. */
  jsonLine(value: unknown): string {
    if (this.jsonShape.jq) {
      this.holdForJq(value);
      return '';
    }
    return `${JSON.stringify(this.shaped(value))}\n`;
  }

  private holdForJq(value: unknown): void {
    const write = async (text: string) => {
      if (text && !this.out(text.endsWith('\n') ? text : `${text}\n`)) await this.drain();
    };
    (this.jqQueue ??= new JqQueue(this.jsonShape.jq!, this.stdoutTTY, write, this.interrupt, (text) => this.err(text), () => this.jqDone.abort())).hold(this.shaped(value));
  }

  /** Aborted once --jq halted (`halt`) or failed: it takes no more values, so a stream feeding it may stop. */
  readonly jqDone = new AbortController();

  /** Runs --jq over the values held, in order, and waits for it; a --jq error (or Ctrl-C) met on the way is thrown. */
  async flushJq(): Promise<void> {
    if (this.jsonShape.jq) await this.jqQueue?.flush();
  }

  /** Status lines for a person: stderr, TTY only, not with --quiet. */
  info(text: string): void {
    if ((this.stderrTTY || this.verbose) && !this.quiet) this.err(`${text}\n`);
  }

  /** Output the user asked for that is not data (--usage, --router-metadata), and facts the user needs (an answer cut short): stderr, always. */
  note(text: string): void {
    this.err(`${text}\n`);
  }

  /** One line, whatever the input it quotes holds: control characters shown escaped, a long one cut. */
  error(text: string): void {
    // Every key the run knows hidden before the cut, which could leave a piece of one err() no longer knows.
    const known = this.knownNow();
    let line = visible(hideSecrets(this.redact(text), known));
    if (line.length > MAX_ERROR_LINE) line = `${line.slice(0, MAX_ERROR_LINE)}…`;
    this.err(this.errColor ? `\x1b[31merror:\x1b[0m ${line}\n` : `error: ${line}\n`);
  }

  /** Text to stderr, every key the run knows hidden (the known keys read at the first write, for stderr only); an open line of streamed text on the same terminal ended first. */
  err(text: string): void {
    this.transient?.();
    const known = this.knownNow();
    if (this.openLine && this.stderrTTY) {
      this.openLine = false;
      text = `\n${text}`;
    }
    try {
      this.stderr.write(hideSecrets(this.redact(text), known));
    } catch {
      /* stderr itself is gone: nothing is left to tell */
    }
  }

  /**
   * Streamed text for stdout: pieces that arrive together go out in one write, on the next turn of
   * the event loop, so a person still sees each token at once; but no sooner than
   * STREAM_WRITE_GAP_MS after the last write, so that a fast stream is a few writes, not one per
   * network read (each wakes the reader on the pipe). Off a terminal whole lines (the rest at the end,
   * or at 64 KiB). Honors backpressure.
   */
  streamWriter(): { write(text: string): Promise<void>; end(): Promise<void> } {
    let pending = '';
    let scheduled = false;
    let lastWrite = -Infinity;
    const whole = !this.stdoutTTY; // `xargs -P 8 router chat > f`: each line in one write, never two answers in one
    const flush = (all: boolean) => {
      scheduled = false;
      const upTo = all || !whole ? pending.length : pending.lastIndexOf('\n') + 1;
      if (upTo === 0) return true;
      lastWrite = now();
      const ok = this.out(pending.slice(0, upTo));
      pending = pending.slice(upTo);
      return ok;
    };
    return {
      write: async (text: string) => {
        pending += text;
        if (pending.length >= 65_536) {
          if (!flush(true)) await this.drain();
        } else if (!scheduled && (!whole || text.includes('\n'))) {
          scheduled = true;
          const wait = lastWrite + STREAM_WRITE_GAP_MS - now();
          if (wait <= 0) setImmediate(() => flush(false));
          else setTimeout(() => flush(false), wait).unref();
        }
      },
      end: async () => {
        if (!flush(true)) await this.drain();
      },
    };
  }

  /** Waits until stdout has flushed, or fails with its error, or with Ctrl-C: a reader that stopped reading never holds the command past it. */
  drain(): Promise<void> {
    return drained(this.stdout, this.interrupt);
  }
}

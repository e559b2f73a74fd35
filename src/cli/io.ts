/** Decides what goes where (gh's iostreams): data to stdout; progress, warnings and color only on a TTY. */
export interface GlobalFlags {
  profile?: string;
  apiRoot?: string;
  timeout?: number;
  maxRetries?: number;
  color?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

export class IO {
  readonly stdoutTTY = !!process.stdout.isTTY;
  readonly stderrTTY = !!process.stderr.isTTY;
  readonly stdinTTY = !!process.stdin.isTTY;
  readonly quiet: boolean;
  readonly verbose: boolean;
  /** Color on stdout. */
  readonly color: boolean;
  /** Color on stderr. */
  readonly errColor: boolean;
  private readonly secrets: string[] = [];

  constructor(flags: GlobalFlags = {}, env: NodeJS.ProcessEnv = process.env) {
    this.quiet = !!flags.quiet;
    this.verbose = !!flags.verbose;
    const decide = (tty: boolean) => {
      if (flags.color === false || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return false;
      if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
      return tty && env.TERM !== 'dumb';
    };
    this.color = decide(this.stdoutTTY);
    this.errColor = decide(this.stderrTTY);
  }

  /** Registers a secret so that no message this process prints can carry it. */
  addSecret(secret: string | undefined): void {
    if (secret && secret.length >= 8) this.secrets.push(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('****');
    return out;
  }

  out(text: string): boolean {
    return process.stdout.write(text);
  }

  json(value: unknown): void {
    this.out(`${JSON.stringify(value, null, this.stdoutTTY ? 2 : undefined)}\n`);
  }

  jsonl(value: unknown): boolean {
    return this.out(`${JSON.stringify(value)}\n`);
  }

  /** Status lines for a person: stderr, TTY only, not with --quiet. */
  info(text: string): void {
    if ((this.stderrTTY || this.verbose) && !this.quiet) process.stderr.write(`${this.redact(text)}\n`);
  }

  /** Output the user asked for that is not data (--usage, --router-metadata): stderr, always. */
  note(text: string): void {
    process.stderr.write(`${this.redact(text)}\n`);
  }

  error(text: string): void {
    const line = this.redact(text);
    process.stderr.write(this.errColor ? `\x1b[31merror:\x1b[0m ${line}\n` : `error: ${line}\n`);
  }

  /**
   * Streamed text for stdout: pieces that arrive together go out in one write (on the next turn
   * of the event loop, so a person still sees each token at once); honors backpressure.
   */
  streamWriter(): { write(text: string): Promise<void>; end(): Promise<void> } {
    let pending = '';
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      if (!pending) return true;
      const ok = this.out(pending);
      pending = '';
      return ok;
    };
    return {
      write: async (text: string) => {
        pending += text;
        if (pending.length >= 65_536) {
          if (!flush()) await this.drain();
        } else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      },
      end: async () => {
        if (!flush()) await this.drain();
      },
    };
  }

  /** Waits until stdout has flushed (for large outputs before exit). */
  drain(): Promise<void> {
    return new Promise((resolve) => {
      if (process.stdout.writableLength === 0) resolve();
      else process.stdout.once('drain', () => resolve());
    });
  }
}

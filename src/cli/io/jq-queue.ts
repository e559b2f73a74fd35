/**
 * Values held for --jq. jq runs over those held whenever it is free (a stream's filtered lines come as
 * its chunks do, not all at its end), and over the rest once the command is done. One run at a time,
 * so they print in order; the values that come meanwhile go in the next (one run for many: jq's
 * start-up is ~1 ms a run). What stops a run is thrown at flush(), as when all ran at the end, and no
 * value after it runs.
 */
export class JqQueue {
  private readonly held: unknown[] = [];
  private running?: Promise<void>;
  private failed?: { err: unknown };
  /** The filter halted (`halt`, `halt_error(0)`): as `jq` reads no more input, no value after it is run. */
  private halted = false;
  /**
   * A filter that reads the values after its own (`first(inputs)`, `[., input]`) runs once over them
   * all when the command is done, as `router … --json | jq FILTER` would (not `jq -n`: the first value is `.`).
   */
  private readonly whole: boolean;
  private done = false;

  constructor(
    private readonly expr: string,
    private readonly tty: boolean,
    private readonly write: (text: string) => Promise<void>,
    private readonly signal?: AbortSignal,
    /** What jq says on stderr (`debug`, `stderr`, `halt_error`'s text). */
    private readonly say?: (text: string) => void,
    /** The filter halted or failed: no value after it is wanted (a stream feeding it may stop). */
    private readonly stopped?: () => void,
  ) {
    this.whole = /(?<![.$\w])inputs?(?!\w)/.test(expr);
  }

  hold(value: unknown): void {
    this.held.push(value);
    this.start();
  }

  /** Runs jq over the values held, in order, and waits for it; a --jq error (or Ctrl-C) met on the way is thrown. */
  async flush(): Promise<void> {
    this.done = true;
    for (this.start(); this.running; this.start()) await this.running;
    if (this.failed) throw this.failed.err;
  }

  private start(): void {
    if (this.halted) this.held.length = 0;
    if (this.running || this.failed || !this.held.length || (this.whole && !this.done)) return;
    this.running = (async () => {
      // Values that came together (one read of the network) go in one run.
      await null;
      try {
        const { runJqEach, runJqOver } = await import('./json-output.js');
        if (this.whole) {
          const texts = this.held.splice(0).flatMap((v) => JSON.stringify(v) ?? []);
          this.halted = await runJqOver(texts.join('\n'), this.expr, this.tty, this.write, this.signal, this.say);
        }
        while (this.held.length && !this.halted) this.halted = await runJqEach(this.held.splice(0), this.expr, this.tty, this.write, this.signal, this.say);
        if (this.halted) {
          this.held.length = 0;
          this.stopped?.();
        }
      } catch (err) {
        this.failed = { err };
        this.held.length = 0;
        this.stopped?.();
      } finally {
        this.running = undefined;
      }
    })();
  }
}

/** Spinners (ora) on stderr, for a person watching a terminal, that leave it as they found it when Ctrl-Z stops the process. */
import type { Ora } from 'ora';
import type { IO } from './io.js';

/**
 * Whether a spinner is drawn on stderr: a terminal that has a width and can move its cursor (not TERM=dumb), and no
 * --quiet. ora divides by the width: on a pty of 0 columns (`script`'s, a container's before it is sized) it cleared
 * lines without end, hundreds of MB in seconds, deaf to SIGTERM.
 */
export const drawsSpinner = (io: IO): boolean => io.stderrTTY && !io.quiet && io.stderr.columns !== 0 && io.env.TERM !== 'dumb';

/** Every spinner made; those spinning when Ctrl-Z comes are stopped (the shell gets its cursor back) and spun again on fg. */
const made = new Set<Ora>();
let stopped: Ora[] = [];

function onTerminalStop(): void {
  stopped = [...made].filter((s) => s.isSpinning);
  for (const s of stopped) s.stop();
  // A SIGTSTP listener takes the place of the stop itself.
  process.kill(process.pid, 'SIGSTOP');
}

function onContinue(): void {
  for (const s of stopped.splice(0)) s.start();
}

/** Makes spinners on the IO's stderr; ora is loaded once, so that a spinner can then start at once. */
export async function spinnerMaker(io: IO): Promise<(text: string) => Ora> {
  const ora = (await import('ora')).default;
  if (!process.listeners('SIGTSTP').includes(onTerminalStop)) {
    process.on('SIGTSTP', onTerminalStop);
    process.on('SIGCONT', onContinue);
  }
  return (text) => {
    // discardStdin off: ora would put the terminal in raw mode, and Ctrl-C would never become SIGINT.
    // color off with the IO's (NO_COLOR, --no-color): ora's own chalk would still paint the spinner.
    const s = ora({ stream: io.stderr, isEnabled: true, discardStdin: false, color: io.errColor ? 'cyan' : false }).start(io.redact(text));
    made.add(s);
    return s;
  };
}

/** The waiting spinner's words for an answer from `model`. */
export const waitingFor = (model: string | undefined): string => `waiting for ${model ?? 'the answer'}`;

/** Per IO, what draws its waiting spinner again while the wait goes on (a retry's note cleared it). */
const waiting = new WeakMap<IO, () => void>();

/** After a note said during a wait (a retry's): the waiting spinner, if any, drawn again below it. */
export function spinAgain(io: IO): void {
  waiting.get(io)?.();
}

/**
 * A spinner while a request waits for its answer, where drawsSpinner allows one; returns what stops it. The IO's next
 * write (the first token, a note, an error) clears it first; spinAgain draws it again. ora loads meanwhile: the request
 * is not held for it.
 */
export function waitingSpinner(io: IO, text: string): () => void {
  // ora clears its line only on a stream that is a terminal itself (not one a test says is).
  if (!drawsSpinner(io) || !io.stderr.isTTY) return () => {};
  // One at a time: a spinner still drawn (a turn's, through a tool round that said nothing) is cleared first.
  io.transient?.();
  let spinner: Ora | undefined;
  let done = false;
  const clear = () => {
    if (io.transient === clear) io.transient = undefined;
    if (!spinner) return;
    spinner.stop();
    made.delete(spinner);
    spinner = undefined;
  };
  const draw = () => {
    io.transient = clear;
    void spinnerMaker(io).then((make) => {
      if (!done && io.transient === clear && !spinner) spinner = make(text);
    });
  };
  const again = () => {
    if (!done && io.transient !== clear) draw();
  };
  waiting.set(io, again);
  draw();
  return () => {
    if (done) return;
    done = true;
    clear();
    if (waiting.get(io) === again) waiting.delete(io);
  };
}

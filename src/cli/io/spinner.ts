/** Spinners (ora) on stderr, for a person watching a terminal, that leave it as they found it when Ctrl-Z stops the process. */
import type { Ora } from 'ora';
import type { IO } from './io.js';

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
    const s = ora({ stream: io.stderr, isEnabled: true, discardStdin: false, color: io.errColor ? 'cyan' : false }).start(text);
    made.add(s);
    return s;
  };
}

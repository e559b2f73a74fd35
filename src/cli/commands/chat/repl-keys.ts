/** The terminal's keys in `chat -i`: a readline for each prompt, and keys swallowed while an answer streams. */
import { createInterface } from 'node:readline';
import type { IO } from '../../io/io.js';

export type Asked = { line: string } | { end: 'eof' | 'interrupt' };

/** One prompt with its own readline: the terminal is in its hands only while the user types. */
export function ask(io: IO, prompt: string, history: string[], historySize: number, fresh: string[], signal: AbortSignal): Promise<Asked> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true, history, historySize, prompt });
    let settled = false;
    // The run stopped while the prompt waits (SIGTERM): the prompt's line is ended and the session with it.
    const stopped = () => {
      io.err('\n');
      done({ end: 'interrupt' });
    };
    rl.on('history', (h: string[]) => history.splice(0, history.length, ...h));
    // Ctrl-Z, then fg: readline pauses the terminal as the process comes back, and a paused one reads as the input's end.
    rl.on('SIGCONT', () => rl.resume());
    const done = (a: Asked) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', stopped);
      rl.close();
      resolve(a);
    };
    rl.on('SIGINT', () => {
      if (rl.line) {
        // Ctrl-C with text on the line clears it, as in a shell.
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
      } else {
        io.err('\n');
        done({ end: 'interrupt' });
      }
    });
    rl.on('line', (line) => {
      // This session's lines, to append to the history file (readline keeps none that is empty).
      if (line) fresh.push(line);
      done({ line });
    });
    rl.on('close', () => {
      // Ctrl-D: end the prompt's line, as a shell does, so that the next prompt starts clean.
      if (!settled) io.err('\n');
      done({ end: 'eof' });
    });
    if (signal.aborted) return stopped();
    signal.addEventListener('abort', stopped, { once: true });
    rl.prompt();
  });
}

/**
 * While an answer streams, keys are read and dropped (nothing typed leaks to the shell after exit),
 * and Ctrl-C stops the answer.
 */
export function swallowKeys(io: IO, onCtrlC: () => void): () => void {
  const onData = (d: Buffer) => {
    if (d.includes(3)) onCtrlC();
  };
  io.stdin.setRawMode?.(true);
  io.stdin.on('data', onData);
  io.stdin.resume();
  return () => {
    io.stdin.off('data', onData);
    io.stdin.setRawMode?.(false);
    io.stdin.pause();
  };
}

/** The terminal's keys in `chat -i`: a readline for each message, and keys swallowed while an answer streams. */
import { createInterface } from 'node:readline';
import type { IO } from '../../io/io.js';

/**
 * A message typed (its lines joined by newlines), or the prompt's end: `typed` holds the text of a
 * message begun on earlier lines (undefined when none was).
 */
export type Asked = { line: string } | { end: 'eof' | 'interrupt'; typed?: string };

/** Terminal sequences that turn bracketed paste on and off: a paste then comes between ESC[200~ and ESC[201~. */
const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/**
 * One message, with its own readline: the terminal is in its hands only while the user types.
 * A line ending in \ goes on in the next (prompt ". "). A paste is part of the message whatever it
 * holds: its newlines end no message (bracketed paste; where the terminal has none, lines that
 * come in one read with more keys after them), and Enter typed after it sends the whole.
 * Only typed lines go in the history, not each line of a paste.
 */
export function ask(io: IO, history: string[], historySize: number, fresh: string[], signal: AbortSignal): Promise<Asked> {
  return new Promise((resolve) => {
    // readline adds every line it reads to the array it is given: a copy, so that a paste's lines stay out of ours.
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true, history: [...history], historySize, prompt: '> ' });
    // Only on a stream that is a terminal itself (not one a test says is): the sequences mean nothing elsewhere.
    const bracketed = !!io.stderr.isTTY && io.env.TERM !== 'dumb';
    const parts: string[] = [];
    let pasting = false;
    /** Whether part of the message was pasted: its lines are not the history's. */
    let pasted = false;
    /** A line that ended with more keys of the same read still to come: the end of a message or a paste's. */
    let ended: string | undefined;
    let settled = false;
    const typed = () => (parts.length ? parts.join('\n') : undefined);
    // The run stopped while the prompt waits (SIGTERM): the prompt's line is ended and the session with it.
    const stopped = () => {
      io.err('\n');
      done({ end: 'interrupt', typed: typed() });
    };
    const keep = (line: string) => {
      if (!line.trim()) return;
      fresh.push(line);
      if (history[0] !== line) history.unshift(line);
      history.splice(historySize);
    };
    const onKey = (_s: string | undefined, key: { name?: string } | undefined) => {
      if (key?.name === 'paste-start') pasting = pasted = true;
      else if (key?.name === 'paste-end') pasting = false;
      // Keys after a line's end in the same read: no one types that fast, so it was pasted.
      if (ended !== undefined) {
        parts.push(ended);
        ended = undefined;
        pasted = true;
        rl.setPrompt('');
      }
    };
    // Before readline's own listener: a key's meaning is settled before readline acts on it.
    io.stdin.prependListener('keypress', onKey);
    // Ctrl-Z, then fg: readline pauses the terminal as the process comes back, and a paused one reads as the input's end.
    rl.on('SIGCONT', () => rl.resume());
    const done = (a: Asked) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', stopped);
      io.stdin.off('keypress', onKey);
      if (bracketed) io.stderr.write(PASTE_OFF);
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
        done({ end: 'interrupt', typed: typed() });
      }
    });
    rl.on('line', (line) => {
      if (pasting) {
        parts.push(line);
        rl.setPrompt('');
        return;
      }
      if (line.endsWith('\\')) {
        if (!pasted) keep(line);
        parts.push(line.slice(0, -1));
        rl.setPrompt('. ');
        return rl.prompt();
      }
      ended = line;
      queueMicrotask(() => {
        if (ended === undefined) return;
        // Enter right after a paste that ended with a newline sends it as it is; an empty line with keys
        // after it in the same read is a blank line of a paste (onKey kept it).
        const afterPaste = !ended && parts.length && rl.getPrompt() === '';
        if (!afterPaste) {
          if (!pasted) keep(ended);
          parts.push(ended);
        }
        done({ line: parts.join('\n') });
      });
    });
    rl.on('close', () => {
      // Ctrl-D: end the prompt's line, as a shell does, so that the next prompt starts clean.
      if (!settled) io.err('\n');
      done({ end: 'eof', typed: typed() });
    });
    if (signal.aborted) return stopped();
    signal.addEventListener('abort', stopped, { once: true });
    if (bracketed) io.stderr.write(PASTE_ON);
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

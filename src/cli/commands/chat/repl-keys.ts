/** The terminal's keys in `chat -i`: a readline for each message, and keys swallowed while an answer streams. */
import { createInterface } from 'node:readline';
import type { IO } from '../../io/io.js';
import { dumbHistory } from './repl-dumb-history.js';

/**
 * A message typed (its lines joined by newlines), or the prompt's end: `typed` holds the text of a
 * message begun on earlier lines (undefined when none was).
 */
export type Asked = { line: string } | { end: 'eof' | 'interrupt'; typed?: string };

/** Terminal sequences that turn bracketed paste on and off: a paste then comes between ESC[200~ and ESC[201~. */
const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/** A key as readline's keypress event gives it. */
type Keypress = [sequence: string | undefined, key: { name?: string; meta?: boolean } | undefined];

/** What the prompts of one session share: the history (newest first), the lines typed since it was saved, and keys typed ahead. */
export interface Prompting {
  history: string[];
  historySize: number;
  /** Lines typed in this session, for the history file. */
  fresh: string[];
  /** Keys that came after a message's end in the same read: they are the next prompt's, typed ahead. */
  ahead: Keypress[];
}

/**
 * Alt-Enter (ESC CR) or Ctrl-J (LF, which a terminal sends apart from Enter's CR): a new line in the message, not its
 * end. An LF is Ctrl-J only when it comes alone: one that ends a line written at once ("hi\n", as `expect` or a
 * program sends it) ends the line, as it always did.
 */
const isNewlineKey = (key: Keypress[1], read: string | undefined) => (key?.name === 'enter' && (key.meta || read === '\n')) || (key?.name === 'return' && !!key.meta);

/**
 * One message, with its own readline: the terminal is in its hands only while the user types.
 * A line ending in \ or Ctrl-J or Alt-Enter goes on in the next (prompt ". "). A paste is part of the
 * message whatever it holds: its newlines end no message, and Enter typed after it sends the whole.
 * Where bracketed paste is on, keys after a message's end in the same read were typed ahead: they go to
 * the next prompt (three slash commands sent at once run one by one). Where it is off (TERM=dumb), such
 * keys are taken for a paste: they join the message. Only typed lines go in the history, not a paste's.
 */
export function ask(io: IO, p: Prompting, signal: AbortSignal): Promise<Asked> {
  return new Promise((resolve) => {
    const { history, historySize, fresh } = p;
    // readline adds every line it reads to the array it is given: a copy, so that a paste's lines stay out of ours.
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true, history: [...history], historySize, prompt: '> ' });
    dumbHistory(rl, history, io.stderr);
    // Only on a stream that is a terminal itself (not one a test says is): the sequences mean nothing elsewhere.
    const bracketed = !!io.stderr.isTTY && io.env.TERM !== 'dumb';
    const parts: string[] = [];
    let pasting = false;
    /** Whether part of the message was pasted: its lines are not the history's. */
    let pasted = false;
    /** The line being ended was ended by Ctrl-J or Alt-Enter: the message goes on. */
    let newline = false;
    /** Without bracketed paste: a line that ended with more keys of the same read still to come: the end of a message or a paste's. */
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
    const onKey = (_s: string | undefined, key: Keypress[1]) => {
      if (key?.name === 'paste-start') pasting = pasted = true;
      else if (key?.name === 'paste-end') pasting = false;
      newline = !pasting && isNewlineKey(key, read);
      // Keys after a line's end in the same read: no one types that fast, so it was pasted.
      if (ended !== undefined) {
        parts.push(ended);
        ended = undefined;
        pasted = true;
        rl.setPrompt('');
      }
    };
    // readline ends no line at Alt-Enter (but in TERM=dumb's minimal mode, which does): the line is ended here.
    const afterReadline = (_s: string | undefined, key: Keypress[1]) => {
      if (newline && !settled && key?.name === 'return') rl.write(null, { name: 'return' });
    };
    /** The read the keys come from now (undefined for keys typed ahead, given again). */
    let read: string | undefined;
    const onRead = (d: Buffer | string) => void (read = d.toString());
    // Before readline's own listeners: the read is known before its keys are, and a key's meaning before readline acts on it.
    io.stdin.prependListener('data', onRead);
    io.stdin.prependListener('keypress', onKey);
    io.stdin.on('keypress', afterReadline);
    // Ctrl-Z, then fg: readline pauses the terminal as the process comes back, and a paused one reads as the input's end.
    rl.on('SIGCONT', () => rl.resume());
    const done = (a: Asked) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', stopped);
      io.stdin.off('keypress', onKey);
      io.stdin.off('data', onRead);
      io.stdin.off('keypress', afterReadline);
      if (bracketed) io.stderr.write(PASTE_OFF);
      rl.close();
      if ('line' in a) keepTypedAhead(io, p.ahead);
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
      if (newline || line.endsWith('\\')) {
        if (!pasted) keep(line);
        parts.push(newline ? line : line.slice(0, -1));
        newline = false;
        rl.setPrompt('. ');
        return rl.prompt();
      }
      if (bracketed) {
        // Enter right after a paste that ended with a newline sends it as it is.
        if (!line && parts.length && rl.getPrompt() === '') return done({ line: parts.join('\n') });
        if (!pasted) keep(line);
        parts.push(line);
        return done({ line: parts.join('\n') });
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
    // Typed ahead: given to this prompt as they came, each to both listeners.
    for (const [s, key] of p.ahead.splice(0)) io.stdin.emit('keypress', s, key);
  });
}

/**
 * Keeps the keys that follow a message's end in the same read (they come at once, before any promise settles)
 * for the next prompt; not an LF right after the CR that ended the line (a terminal's Enter sent as CR LF).
 */
function keepTypedAhead(io: IO, ahead: Keypress[]): void {
  const capture = (s: string | undefined, key: Keypress[1]) => {
    if (!ahead.length && key?.name === 'enter' && !key.meta) return;
    ahead.push([s, key]);
  };
  io.stdin.on('keypress', capture);
  queueMicrotask(() => io.stdin.off('keypress', capture));
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

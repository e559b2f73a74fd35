/** Questions asked on a terminal (@inquirer/prompts), each ended by Ctrl-C or by the end of its input. */
import { Writable } from 'node:stream';
import { usage } from '../exit-codes.js';
import type { InStream, IO, OutStream } from './io.js';

/** What a prompt of @inquirer/prompts is given: where it reads and draws, and what ends it. */
export type PromptContext = { input: InStream; output: OutStream; signal: AbortSignal };

/**
 * Asks one question with an @inquirer/prompts prompt, reading stdin and drawing on stderr. The run's Ctrl-C (a
 * SIGINT before the prompt took the terminal) ends it at once; input that ends before an answer (a terminal
 * closed, a typed-ahead feed run dry) is a usage error naming the question, not a prompt waiting on nothing.
 * `interrupt` is what else ends it (the run's Ctrl-C unless given: chat -i gives its turn's).
 */
export async function ask<C extends { message: string }, R>(io: IO, prompt: (config: C, context: PromptContext) => Promise<R>, config: C, interrupt = io.interrupt): Promise<R> {
  // A spinner still waiting (chat -i's, for the answer that asks --approve's question) would draw over the question.
  io.transient?.();
  const input = io.stdin;
  const ended = new AbortController();
  const onEnd = () => ended.abort(usage(`input ended before an answer to "${config.message}"`));
  // An earlier prompt may have read the end already (Ctrl-D, or a pty's EOF, between two prompts).
  if (input.readableEnded || input.destroyed) onEnd();
  input.once('end', onEnd);
  input.once('close', onEnd);
  // A terminal can stop delivering without an end (a pty's EOF read while paused between prompts): the process
  // then runs out of work with the question open, and that is the same end of input.
  process.on('beforeExit', onEnd);
  const screen = promptScreen(io.stderr, io.errColor);
  // Ctrl-Z, then fg: readline pauses the terminal as the process comes back (after this listener: hence the next turn),
  // and @inquirer/prompts does not resume it; paused, it would read as the input's end. Nor does it draw the question
  // again until a key changes it (readline's own redraw goes to its muted output): drawn here, at once.
  const onContinue = () =>
    setImmediate(() => {
      input.resume();
      screen.redraw();
    });
  process.on('SIGCONT', onContinue);
  const signal = interrupt ? AbortSignal.any([interrupt, ended.signal]) : ended.signal;
  try {
    return await prompt(config, { input, output: screen.stream, signal });
  } catch (err) {
    if (ended.signal.aborted && !interrupt?.aborted) throw ended.signal.reason;
    throw err;
  } finally {
    input.off('end', onEnd);
    input.off('close', onEnd);
    process.off('beforeExit', onEnd);
    process.off('SIGCONT', onContinue);
  }
}

/** A move of the cursor along its line: all a prompt writes when only the cursor moved. */
const CURSOR_MOVE = /^\x1b\[\d+G$/;
/** A color or attribute (bold, dim) sequence. */
const SGR = /\x1b\[[0-9;]*m/g;
/** What a prompt writes when it is done: the cursor shown again. */
const SHOW_CURSOR = '\x1b[?25h';
/** What a prompt's drawing starts with: down to its last line, then up erasing the lines of the drawing before. */
const ERASE_BEFORE = /^(\x1b\[\d+B)?(\x1b\[2K\x1b\[1A)*(\x1b\[2K\x1b\[G)?/;

/**
 * stderr as a prompt draws on it (@inquirer/prompts ends the stream it was given when done, and stderr outlives it), and
 * what it drew last, to draw again where the cursor is now (after fg, below the shell's line): each of its drawings is one
 * write, which erases the one before; a move of the cursor alone comes after it.
 */
function promptScreen(out: OutStream, color: boolean): { stream: OutStream; redraw: () => void } {
  let drawn = '';
  let cursor = '';
  const through = new Writable({
    write(chunk: Buffer, _encoding, done) {
      // @inquirer/prompts colors by process.env alone (yoctocolors, read once): under --no-color its colors are taken out here.
      const text = color ? chunk.toString() : chunk.toString().replace(SGR, '');
      if (CURSOR_MOVE.test(text)) cursor = text;
      else if (!text.includes(SHOW_CURSOR)) [drawn, cursor] = [text, ''];
      out.write(text);
      done();
    },
  });
  const stream = Object.defineProperties(through, {
    isTTY: { get: () => out.isTTY },
    columns: { get: () => out.columns },
    rows: { get: () => (out as { rows?: number }).rows },
  });
  // From the line's start, erasing what is below: the drawing's lines, however many it has.
  return { stream, redraw: () => drawn && out.write(`\r\x1b[J${drawn.replace(ERASE_BEFORE, '')}${cursor}`) };
}

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
  // Ctrl-Z, then fg: readline pauses the terminal as the process comes back (after this listener: hence the next turn),
  // and @inquirer/prompts does not resume it; paused, it would read as the input's end.
  const onContinue = () => setImmediate(() => input.resume());
  process.on('SIGCONT', onContinue);
  const signal = interrupt ? AbortSignal.any([interrupt, ended.signal]) : ended.signal;
  try {
    return await prompt(config, { input, output: unending(io.stderr), signal });
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

/** stderr as a prompt draws on it: @inquirer/prompts ends the stream it was given when done, and stderr outlives it. */
function unending(out: OutStream): OutStream {
  const through = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.write(chunk);
      done();
    },
  });
  return Object.defineProperties(through, {
    isTTY: { get: () => out.isTTY },
    columns: { get: () => out.columns },
    rows: { get: () => (out as { rows?: number }).rows },
  });
}

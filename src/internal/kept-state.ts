/**
 * State files router keeps for itself (the batch index, batch-places.json, job records, create records, …) read by
 * one rule: one that is not there is empty; one that cannot be read, or is damaged, is said once a run (a warning
 * line, by the wording of the config file: `keptFileWhy`) to the code running under `hearingKeptProblems` (the CLI's
 * run), and never thrown. A program that does not ask hears nothing, as before.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { keptFileWhy } from './named-input.js';
import { readLocalText } from './local-file.js';

interface Hearing {
  report: (line: string) => void;
  said: Set<string>;
}
// Per run, not per process: a program running two commands at once (or tests in one process) hears each its own.
const hearing = new AsyncLocalStorage<Hearing>();

/** Runs `fn` with warnings of kept files going to `report` (the CLI: its stderr), each line once within it. */
export function hearingKeptProblems<T>(report: (line: string) => void, fn: () => T): T {
  return hearing.run({ report, said: new Set() }, fn);
}

/** Says `warning: PATH: WHAT` once, to whoever runs the calling code under `hearingKeptProblems`. */
export function sayKeptProblem(path: string, what: string): void {
  const h = hearing.getStore();
  if (!h) return;
  const line = `warning: ${path}: ${what}`;
  if (h.said.has(line)) return;
  h.said.add(line);
  h.report(line);
}

/**
 * A kept file's text; undefined when it is not there, or when it cannot be read (said, with `then`: what is done
 * instead, such as "taken as empty").
 */
export function readKeptText(path: string, then: string, max?: number): string | undefined {
  const text = readKeptRecord(path, then, max);
  return text === UNREADABLE ? undefined : text;
}

/** What readKeptRecord gives for a file that is there and cannot be read. */
export const UNREADABLE: unique symbol = Symbol('unreadable');

/**
 * As readKeptText, for a record whose absence itself says something (a create's record gone: nothing left unanswered):
 * one that is there and cannot be read is UNREADABLE (said, with `then`), never taken for one not there.
 */
export function readKeptRecord(path: string, then: string, max?: number): string | undefined | typeof UNREADABLE {
  try {
    return readLocalText(path, max);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    sayKeptProblem(path, `${code ? keptFileWhy(code) : `cannot read it (${(err as Error).message})`}; ${then}`);
    return UNREADABLE;
  }
}

/**
 * State files router keeps for itself (the batch index, batch-places.json, job records, create records, …) read by
 * one rule: one that is not there is empty; one that cannot be read, or is damaged, is said once a run (a warning
 * line, by the wording of the config file: `keptFileWhy`) through the reporter the CLI sets, and never thrown.
 * A program that sets no reporter hears nothing, as before.
 */
import { keptFileWhy } from './named-input.js';
import { readLocalText } from './local-file.js';

let reporter: ((line: string) => void) | undefined;
const said = new Set<string>();

/** Where warnings of kept files go (the CLI: its stderr); each line is said once until the next call. */
export function onKeptFileProblem(report: ((line: string) => void) | undefined): void {
  reporter = report;
  said.clear();
}

/** Says `warning: PATH: WHAT` once. */
export function sayKeptProblem(path: string, what: string): void {
  const line = `warning: ${path}: ${what}`;
  if (said.has(line)) return;
  said.add(line);
  reporter?.(line);
}

/**
 * A kept file's text; undefined when it is not there, or when it cannot be read (said, with `then`: what is done
 * instead, such as "taken as empty").
 */
export function readKeptText(path: string, then: string, max?: number): string | undefined {
  try {
    return readLocalText(path, max);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    sayKeptProblem(path, `${code ? keptFileWhy(code) : `cannot read it (${(err as Error).message})`}; ${then}`);
    return undefined;
  }
}

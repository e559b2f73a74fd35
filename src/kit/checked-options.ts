/**
 * The numbers and attachments a kit call takes, checked before anything is sent or run, as the CLI checks its flags:
 * from JavaScript a NaN, a string or a negative number would be taken as it came (a bound of nothing, a timeout that
 * fires at once), and a path given as an attachment would be sent as a file without its bytes.
 */
import { ValidationError } from '../client/errors.js';
import { shownGiven as shown } from '../internal/shape.js';

/** setTimeout's longest wait: a longer one fires at once. */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;


/** Each of `names` in `opts`, where given, is a whole number of at least `least` (rounds: 0 runs none, and gives the calls; bytes). */
export function checkCounts(call: string, opts: object, names: string[], least: number): void {
  for (const name of names) {
    const v: unknown = (opts as Record<string, unknown>)[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= least)) throw new ValidationError(`${call} ${name} must be a whole number of at least ${least}, not ${shown(v)}`);
  }
}

/** `opts[name]`, where given, is a number of milliseconds over 0 that a timer can wait. */
export function checkTimeout(call: string, opts: object, name: string): void {
  const v: unknown = (opts as Record<string, unknown>)[name];
  if (v !== undefined && !(typeof v === 'number' && v > 0 && v <= LONGEST_TIMEOUT_MS)) {
    throw new ValidationError(`${call} ${name} must be a number of milliseconds over 0 and at most ${LONGEST_TIMEOUT_MS.toLocaleString('en-US')}, not ${shown(v)}`);
  }
}

/** The attachments, where given, are an array of what readAttachment() and attachmentFromBytes() make. */
export function checkAttachments(call: string, given: unknown): void {
  if (given === undefined) return;
  const how = "read a file with readAttachment('photo.png'), or make one of bytes with attachmentFromBytes()";
  if (!Array.isArray(given)) throw new ValidationError(`${call} attachments must be an array of attachments, not ${shown(given)}: ${how}`);
  given.forEach((a: unknown, i) => {
    const made = typeof a === 'object' && a !== null && ['source', 'kind', 'mediaType', 'filename'].every((k) => typeof (a as Record<string, unknown>)[k] === 'string');
    if (!made) throw new ValidationError(`${call} attachments[${i}] is no attachment (${shown(a)}): ${how}`);
  });
}

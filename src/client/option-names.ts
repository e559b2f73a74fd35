import { closest } from '../internal/did-you-mean.js';
import { ValidationError } from './errors.js';

/**
 * The names of an options type, each given once and checked against the type both ways: a name the type does not
 * have fails to compile, and so does a member of the type not named (a new option is a name here too).
 */
export function optionNames<T>() {
  return <const N extends { [K in keyof T]-?: 1 }>(names: N & { [K in Exclude<keyof N, keyof T>]: never }): readonly string[] => Object.keys(names);
}

/** What other clients call an option, by the name this package gives it. */
const OTHER_NAMES: Record<string, string> = {
  baseURL: 'apiRoot', baseUrl: 'apiRoot', base_url: 'apiRoot', apiBase: 'apiRoot', api_root: 'apiRoot', root: 'apiRoot',
  api_key: 'apiKey', key: 'apiKey', token: 'apiKey', timeout: 'timeoutMs', max_retries: 'maxRetries', retries: 'maxRetries',
  defaultHeaders: 'headers', fetch: 'dispatcher', httpAgent: 'dispatcher', agent: 'dispatcher', fetchOptions: 'dispatcher',
  abortSignal: 'signal', session_id: 'sessionId', extraHeaders: 'headers', extra_headers: 'headers',
};

/**
 * Options are those a call knows: one it does not (openai's `baseURL`, a `timeout` for `timeoutMs`) would be left
 * unread, silently, where a program in JavaScript has no compiler to say so. Refused before anything is done, with a
 * ValidationError naming the option meant: another SDK's name for it, else the nearest name, else every one.
 */
export function checkOptions(call: string, opts: unknown, known: readonly string[]): void {
  if (opts === null || typeof opts !== 'object') return;
  for (const name of Object.keys(opts)) {
    if (known.includes(name)) continue;
    const ours = OTHER_NAMES[name] !== undefined && known.includes(OTHER_NAMES[name]) ? OTHER_NAMES[name] : closest(name, known);
    const instead = ours ? `: did you mean ${ours}?` : `; it takes ${known.join(', ')}`;
    throw new ValidationError(`${call} has no option ${JSON.stringify(name)}${instead}`);
  }
}

/** Only the options `known` names, of an object holding more (a job's options passed on to the part that opens it). */
export function pickOptions<T extends object>(opts: T, known: readonly string[]): Partial<T> {
  return Object.fromEntries(known.filter((name) => name in opts).map((name) => [name, (opts as Record<string, unknown>)[name]])) as Partial<T>;
}

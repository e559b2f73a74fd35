import { closest } from '../internal/did-you-mean.js';
import { ValidationError } from './errors.js';
import type { Query } from './core.js';

/** A call's query: each name the library takes, with the service's name for it (api.md, else the official OpenAPI). */
export type QueryNames = Readonly<Record<string, string>>;

/**
 * The query names of a query type, each given once with the service's name and checked against the type both ways
 * (as `optionNames`): the one list a call both checks a query against and sends it by.
 */
export function queryNames<T>() {
  return <const N extends { [K in keyof T]-?: string }>(names: N & { [K in Exclude<keyof N, keyof T>]: never }): QueryNames => names;
}

/** The query as sent: each name given, as the service spells it (values as given; the URL writes them as text). */
export function wireQuery(query: object, names: QueryNames): Query {
  const out: Query = {};
  for (const [name, value] of Object.entries(query)) if (Object.hasOwn(names, name)) out[names[name]!] = value as Query[string];
  return out;
}

/**
 * A query names only what the call takes: a mistyped filter (`stauts`) would be left unread, and the listing would
 * silently hold everything. Refused before anything is sent, naming ours for the service's spelling
 * (`api_key_hash`), else the nearest name, else every one.
 */
export function checkQuery(call: string, query: unknown, names: QueryNames): void {
  if (query === null || typeof query !== 'object') return;
  const ours = Object.keys(names);
  for (const name of Object.keys(query)) {
    if (Object.hasOwn(names, name)) continue;
    const meant = ours.find((n) => names[n] === name) ?? closest(name, ours);
    const instead = meant ? `: did you mean ${meant}?` : `; it takes ${ours.join(', ')}`;
    throw new ValidationError(`${call} has no query name ${JSON.stringify(name)}${instead}: nothing was sent`);
  }
}

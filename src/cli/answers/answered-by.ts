/**
 * Which model answered, said on stderr when the user cannot tell otherwise: no model was named (the
 * service chose its default), or another model answered than the one asked (a fallback, a router).
 * A model named and answering says nothing, so scripts that name theirs stay quiet; --json carries
 * the model in its output, and --router-metadata says the routing itself.
 */
import type { IO } from '../io/io.js';

/** The model part of an id, without a `:variant` (`:free`, `:nitro`). */
const base = (id: string) => id.replace(/:[^/]*$/, '');

/** A dated snapshot's suffix (`-2024-08-06`, `-20240620`, `@20240620`, `-0613`); not `.1` nor `-5-sonnet`: other models. */
const DATED = /^[-@](\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/;

/** The answer names the model asked, or a dated snapshot of it. */
function sameModel(asked: string, answered: string): boolean {
  const a = base(asked);
  const b = base(answered);
  return a === b || (b.startsWith(a) && DATED.test(b.slice(a.length)));
}

export function answeredByNote(asked: string | undefined, answered: string | undefined): string | undefined {
  if (!answered) return undefined;
  if (!asked) return `note: answered by ${answered}, the service's default model (--model names one; router config set model keeps one)`;
  if (sameModel(asked, answered)) return undefined;
  return `note: answered by ${answered}, not ${asked} (--router-metadata says why)`;
}

/**
 * Says it, unless the output or a routing note already does. The service's default answering is
 * status, not a surprise: --quiet silences it; another model than the one asked is said anyway.
 */
export function noteAnsweredBy(io: IO, opts: { json?: unknown; routerMetadata?: boolean }, asked: string | undefined, answered: string | undefined): void {
  if (opts.json || opts.routerMetadata || (io.quiet && !asked)) return;
  const line = answeredByNote(asked, answered);
  if (line) io.note(line);
}

const toldDefault = new WeakSet<IO>();

/** chat -i with no model named: the first answer says, once a session, which model the service chose. */
export function noteReplDefault(io: IO, model: string | undefined, answered: string | undefined): void {
  if (model || !answered || toldDefault.has(io)) return;
  toldDefault.add(io);
  io.err(`(answered by ${answered}, the service's default model; /model picks one)\n`);
}

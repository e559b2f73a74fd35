import type { IO } from './io.js';

/** The runs told that a credential went unencrypted: said once a run, piped too (a REPL and a tool loop connect again). */
const toldClear = new WeakMap<IO, Set<string>>();

/** Says once a run that `what` (the API key, an MCP server's password) goes over plain http://, readable on the way. */
export function plainHttpWarning(io: IO, what: string): void {
  const said = toldClear.get(io) ?? new Set<string>();
  if (said.has(what)) return;
  toldClear.set(io, said.add(what));
  io.note(`warning: ${what} over plain http://, unencrypted: anyone on the way can read it (use https://)`);
}

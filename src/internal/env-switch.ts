/** Words that turn a no-switch (ROUTER_NO_LOG, ROUTER_NO_STDIN) on, and those that say off; any other value is read as off. */
const SWITCH_ON = ['1', 'true', 'yes'];
const SWITCH_OFF = ['', '0', 'false', 'no'];

/** A switch variable's value, spaces around it dropped and any case, as every `ROUTER_*` value is read. */
const said = (value: string | undefined) => (value ?? '').trim().toLowerCase();

export function switchOn(value: string | undefined): boolean {
  return SWITCH_ON.includes(said(value));
}

/** Set to a word that is neither on nor off (`on`, `enabled`): read as off, which the user should hear. */
export function switchUnclear(value: string | undefined): boolean {
  return value !== undefined && !SWITCH_ON.includes(said(value)) && !SWITCH_OFF.includes(said(value));
}

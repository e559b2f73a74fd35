import { isBlank } from '../internal/blank.js';

/** The user's state folder for router (XDG): jobs, the emulator's state. `ROUTER_STATE_DIR` moves it. */
export function stateHome(env: NodeJS.ProcessEnv = process.env): string {
  if (!isBlank(env.ROUTER_STATE_DIR)) return env.ROUTER_STATE_DIR;
  const base = isBlank(env.XDG_STATE_HOME) ? `${env.HOME ?? '.'}/.local/state` : env.XDG_STATE_HOME;
  return `${base}/router`;
}

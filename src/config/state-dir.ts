import { join } from 'node:path';
import { isBlank } from '../internal/blank.js';
import { xdgBase } from './xdg.js';

/** The user's state folder for router (XDG): jobs, the emulator's state. `ROUTER_STATE_DIR` moves it. */
export function stateHome(env: NodeJS.ProcessEnv = process.env): string {
  if (!isBlank(env.ROUTER_STATE_DIR)) return env.ROUTER_STATE_DIR;
  return join(xdgBase(env, 'XDG_STATE_HOME', join('.local', 'state')), 'router');
}

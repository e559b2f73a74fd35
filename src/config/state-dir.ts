/** The user's state folder for router (XDG): jobs, the emulator's state. `ROUTER_STATE_DIR` moves it. */
export function stateHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ROUTER_STATE_DIR) return env.ROUTER_STATE_DIR;
  const base = env.XDG_STATE_HOME || `${env.HOME ?? '.'}/.local/state`;
  return `${base}/router`;
}

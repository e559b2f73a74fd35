/**
 * A child started `detached` leads a process group (and session) of its own: what it starts (a
 * wrapper's real program, a background job) is in that group, and ends with it.
 */

/** Sends `sig` to the whole group led by `pid`; false when no member is left. */
export function signalGroup(pid: number | undefined, sig: NodeJS.Signals | 0): boolean {
  try {
    return !!pid && process.kill(-pid, sig);
  } catch {
    return false;
  }
}

/**
 * Ends the group: SIGTERM, then SIGKILL `graceMs` later if a member still runs (one that ignores
 * SIGTERM, or outlived its leader). Resolves once the group is gone or has been sent SIGKILL.
 */
export function endGroup(pid: number | undefined, graceMs = 2000): Promise<void> {
  if (!signalGroup(pid, 'SIGTERM')) return Promise.resolve();
  const since = Date.now();
  return new Promise((resolve) => {
    const check = setInterval(() => {
      const alive = signalGroup(pid, 0);
      if (alive && Date.now() - since < graceMs) return;
      if (alive) signalGroup(pid, 'SIGKILL');
      clearInterval(check);
      resolve();
    }, 20);
  });
}

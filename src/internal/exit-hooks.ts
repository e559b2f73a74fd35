/**
 * What must be done when the process exits (a tool's process group to end, a lock to let go), under
 * one 'exit' listener for all of them, there only while one is wanted. A library in someone else's
 * process adds no listener per child or call: eleven in flight would make node print a
 * MaxListenersExceededWarning on the host's stderr.
 */
const hooks = new Set<() => void>();

function runHooks(): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch {
      // One that fails leaves the others to run.
    }
  }
}

/** Runs `hook` if the process exits before the returned function is called (which may be called more than once). */
export function atExit(hook: () => void): () => void {
  const entry = () => hook();
  if (hooks.size === 0) process.on('exit', runHooks);
  hooks.add(entry);
  return () => {
    if (hooks.delete(entry) && hooks.size === 0) process.off('exit', runHooks);
  };
}

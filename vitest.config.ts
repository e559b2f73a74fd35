import { defineConfig } from 'vitest/config';
import { TEST_BOUND_MS } from './test/support/test-bound.js';

export default defineConfig({
  test: {
    // A guard against a hang, not a speed goal; the waits inside a test end with it (waitBound in test/support/until.ts).
    testTimeout: TEST_BOUND_MS,
    hookTimeout: TEST_BOUND_MS,
    pool: 'forks',
    // Workers are reused from file to file, with src/ and the helpers loaded once per worker. Each file
    // starts its own emulator in its own folder, and restores the working folder and environment it
    // changes. One project: files that run main() in the worker and files that spawn bin/router.cjs share
    // the workers, so one file's CPU overlaps another's waiting on its children.
    isolate: false,
    // Much of a test's time is waiting (on spawned CLIs, the emulator, timers), not CPU: more workers than cores keep
    // the cores busy. Measured on the shared machine, whole-run CPU of everything started (cgroup) and the machine's
    // idle core-seconds during the run: 6 workers leave 6-8 core-seconds idle, 8 leave 0-3, for about the same CPU
    // (71-79 s either way); the wall with the other users' CPU taken out: 6 workers 38-42 s, 7 37-41 s, 8 38-40 s.
    // Each worker loads src/ and the helpers once.
    maxWorkers: 8,
    reporters: ['default', './test/summary-reporter.ts'],
    include: ['test/**/*.test.ts'],
    // day-turn.ts: no test starts just before a UTC day turns, which would turn budgets' days under it.
    setupFiles: ['test/support/quiet-node.ts', 'test/support/day-turn.ts', 'test/support/fetch-keep-alive.ts'],
    // Keys saved by tests go to their config files, never to the keychain of the machine running them
    // (test/e2e/keychain.test.ts turns it on inside a D-Bus session of its own).
    env: { ROUTER_KEYCHAIN: 'off' },
  },
});

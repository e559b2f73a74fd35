import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Workers are reused from file to file, with src/ and the helpers loaded once per worker. Each file
    // starts its own emulator in its own folder, and restores the working folder and environment it
    // changes. One project: files that run main() in the worker and files that spawn bin/router share
    // the workers, so one file's CPU overlaps another's waiting on its children.
    isolate: false,
    // Most of a test's time is waiting (on spawned CLIs, the emulator, timers), not CPU: eight workers on two
    // cores keep the cores busy (measured on a loaded machine: 2 workers 128 s, 4 83 s, 6 62 s, 8 48 s, ~85 s of CPU).
    // Each worker loads src/ and the helpers once.
    poolOptions: { forks: { maxForks: 8, minForks: 8 } },
    reporters: ['default', './test/summary-reporter.ts'],
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/quiet-node.ts'],
  },
});

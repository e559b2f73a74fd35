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
    // Much of a test's time is waiting (on spawned CLIs, the emulator, timers), not CPU: more workers than cores keep
    // the cores busy, but each worker loads src/, the helpers and what its files import once more (~3 s of CPU each
    // here). Since terminals stopped starting a tmux per key and test folders moved to tmpfs (no fsync waits), six
    // keep two cores busy: measured whole-run CPU (everything started, by cgroup) 8 workers 78-82 s, 6 72-75 s,
    // 5 70 s, 4 70-71 s; with 4 and 5 the cores sat idle part of the run (20% and 12% of the machine idle).
    poolOptions: { forks: { maxForks: 6, minForks: 6 } },
    reporters: ['default', './test/summary-reporter.ts'],
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/quiet-node.ts'],
  },
});

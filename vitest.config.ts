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
    // One worker a core (this machine has two): each worker loads src/ and the helpers once.
    poolOptions: { forks: { maxForks: 2, minForks: 2 } },
    reporters: ['default', './test/summary-reporter.ts'],
    include: ['test/**/*.test.ts'],
  },
});

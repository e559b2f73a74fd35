import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Workers are reused from file to file, with src/ and the helpers loaded once per worker. Only the
    // root's setting decides this (a project's `isolate: false` alone still gave every file a process
    // of its own). Each file starts its own emulator in its own folder, and restores the working
    // folder and environment it changes. Projects run one after the other.
    isolate: false,
    // One worker a core (this machine has two): each worker loads src/ and the helpers once.
    poolOptions: { forks: { maxForks: 2, minForks: 2 } },
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      // Files that run main() and the emulator in this process.
      { extends: true, test: { name: 'in-process', include: ['test/inprocess/**/*.test.ts', 'test/unit/**/*.test.ts', 'test/conformance*.test.ts'] } },
      // Files that spawn bin/router (the emulator still runs in the worker).
      { extends: true, test: { name: 'spawned', include: ['test/**/*.test.ts'], exclude: ['test/inprocess/**', 'test/unit/**', 'test/conformance*.test.ts'] } },
    ],
  },
});

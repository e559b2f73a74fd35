import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One worker a core: each worker loads src/ and the test helpers once, and a third one cost more
    // CPU than its overlap of waiting saved (in-process files: 79 s of CPU with 3 workers, 71 s with 2).
    poolOptions: { forks: { maxForks: 2, minForks: 2 } },
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      // Files that run main() and the emulator in this process share a worker's loaded modules: importing
      // src/ afresh for every file cost more CPU than many of their tests. Each file still starts its own
      // emulator in its own folder, and restores the working folder and environment it changes.
      { extends: true, test: { name: 'in-process', include: ['test/inprocess/**/*.test.ts', 'test/unit/**/*.test.ts', 'test/conformance*.test.ts'], isolate: false } },
      // The spawned files too: each imports the emulator and the helpers, and a fresh worker per file cost
      // ~0.25 s of CPU each. They change no process-wide state (their CLIs run in child processes).
      { extends: true, test: { name: 'spawned', isolate: false, include: ['test/**/*.test.ts'], exclude: ['test/inprocess/**', 'test/unit/**', 'test/conformance*.test.ts'] } },
    ],
  },
});

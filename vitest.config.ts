import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test time is waiting on spawned CLIs and the emulator, not CPU: more files at once than cores.
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    reporters: ['default', './test/summary-reporter.ts'],
  },
});

import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// `TEST_CPU_LOG=/tmp/cpu.tsv npx vitest run -c vitest.cpu.config.ts`: the suite, with the CPU of each
// file (its worker's and its children's) and of vitest's main process appended to the file.
export default mergeConfig(base, defineConfig({ test: { setupFiles: ['./test/support/cpu-by-file.ts'], globalSetup: ['./test/support/cpu-main.ts'] } }));

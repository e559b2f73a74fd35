/**
 * The bound of every test and hook (vitest.config.ts): a guard against a hang, not a speed goal. Generous, as a
 * loaded machine runs a spawned CLI 3x slower, and at load 60-78 on two cores tests that pass alone in seconds took
 * past 60 s (a spawned process, a serve started).
 */
export const TEST_BOUND_MS = 180_000;

import { beforeAll, expect, it } from 'vitest';
import { TEST_BOUND_MS } from '../support/test-bound.js';
import { SETTLE, waitBound } from '../support/until.js';

// A wait inside a test (until, vi.waitFor with SETTLE, a terminal's waitFor, a spawned CLI's run) ends with its test's
// bound, a little before it: not on a bound of its own, shorter, that a loaded machine passes while the state it waits
// for is still on its way.
let inHook = 0;
beforeAll(() => {
  inHook = waitBound();
});

it('in a hook: the hook\'s whole bound less a margin', () => {
  expect(inHook).toBeLessThan(TEST_BOUND_MS);
  expect(inHook).toBeGreaterThan(TEST_BOUND_MS / 2);
});

it('in a test: what is left of that test\'s own bound, read at each wait', () => {
  const bound = 10 * TEST_BOUND_MS;
  const { timeout } = SETTLE;
  expect(timeout).toBeGreaterThan(TEST_BOUND_MS);
  expect(timeout).toBeLessThan(bound);
  expect(waitBound()).toBeLessThanOrEqual(timeout);
}, 10 * TEST_BOUND_MS);

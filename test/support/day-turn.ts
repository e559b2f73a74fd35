import { beforeEach } from 'vitest';
import { until } from './until.js';

/**
 * Budgets, key limits and the service's activity count UTC days (and months, which turn with a day). A test that
 * writes today's spend and then runs a call, or makes calls one after another under a daily budget, fails when the
 * day turns between the two: the spend is yesterday's, and the budget is whole again. No test starts within this
 * long of a turn: it waits for the turn instead. Longer than most tests take on a loaded machine.
 */
const DAY_TURN_MARGIN_MS = 120_000;

const DAY_MS = 86_400_000;
const utcDay = (): number => Math.floor(Date.now() / DAY_MS);

/** How long until the UTC day turns. */
function untilDayTurn(now = Date.now()): number {
  return DAY_MS - (now % DAY_MS);
}

beforeEach(async () => {
  if (untilDayTurn() >= DAY_TURN_MARGIN_MS) return;
  const day = utcDay();
  await until(() => utcDay() !== day);
});

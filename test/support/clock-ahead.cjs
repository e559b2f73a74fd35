// Preloaded into a spawned `router` (NODE_OPTIONS=--require …): its Date.now() reads ROUTER_TEST_CLOCK_AHEAD_MS ahead,
// as if it ran that much later. How a test has `usage --reconcile` run an hour after a call without waiting the hour.
'use strict';
const ahead = Number(process.env.ROUTER_TEST_CLOCK_AHEAD_MS) || 0;
const now = Date.now;
Date.now = () => now() + ahead;

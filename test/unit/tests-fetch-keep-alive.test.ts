import { expect, it } from 'vitest';
import { KEEP_ALIVE } from '../../src/internal/keep-alive.js';

// The tests' own fetch() (test/support/fetch-keep-alive.ts) lets an idle connection go as the client does: up to the
// server's Keep-Alive hint less 4 s, 30 s at most (src/internal/keep-alive.ts). node's own Agent kept `router serve`'s
// 65 s connection 63 s, on a 1 s timer: at load a call made ~64 s after the one before met the emulator closing it
// (ECONNRESET in cli-edges-s61). Read from the options of the dispatcher node's fetch() goes through: timing a
// connection's reuse would hang on the machine's load.
it('fetch() in the tests goes through a dispatcher keeping idle connections as the client does', () => {
  const dispatcher = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] as object | undefined;
  expect(dispatcher).toBeDefined();
  const options = Object.getOwnPropertySymbols(dispatcher).find((s) => s.description === 'options');
  expect(options).toBeDefined();
  expect((dispatcher as Record<symbol, object>)[options!]).toMatchObject(KEEP_ALIVE);
});

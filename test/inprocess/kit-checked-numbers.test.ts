import { expect, it } from 'vitest';
import type { RouterClient } from '../../src/client/index.js';
import { InvalidAmount, serviceListPrices, SpendGuard } from '../../src/kit/index.js';
import { kitPerTest } from '../support/inprocess-env.js';

// What a JavaScript program passes the kit where a number or an attachment goes: a NaN, a string or a
// negative number is refused before anything is sent, as the CLI refuses its flags; taken as it came, a cap
// held nothing and a bound or a timeout said nonsense.
let client: RouterClient;

kitPerTest('router-kit-numbers-', (f) => ({ client } = f));

it("a SpendGuard's maxCost that is no amount of USD is an InvalidAmount when the guard is made", () => {
  const prices = serviceListPrices(client);
  for (const maxCost of [Number.NaN, 'abc', '0.5', -1, Infinity] as unknown[]) {
    // Was taken: NaN and a string held no call (every comparison with them false), -1 refused each one.
    expect(() => new SpendGuard({ prices, maxCost: maxCost as number })).toThrow(InvalidAmount);
  }
  expect(() => new SpendGuard({ prices, maxCost: Number('') - 1 })).toThrow(/^maxCost is an amount of USD such as 2 or 0\.50, got -1$/);
  for (const maxCost of [0, 1e-9, 2]) expect(new SpendGuard({ prices, maxCost }).opts.maxCost).toBe(maxCost);
});

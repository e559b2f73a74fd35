import { expect, it } from 'vitest';
import { countUsage, periodStart } from '../../src/emulator/state/key-usage.js';
import type { KeyRecord } from '../../src/emulator/state/store-api.js';

const at = (iso: string) => Date.parse(iso);

// The UTC day of a charge is kept from one call to the next (key-usage.ts dayOf): each call still lands on its own day.
it('counts each charge on its own UTC day, across midnights, back and forth', () => {
  const r = { key: 'sk-rt-v1-days', workspace: 'w', kind: 'standard' } as unknown as KeyRecord;
  for (const [iso, cost] of [
    ['2026-11-27T23:59:59.999Z', 1],
    ['2026-11-28T00:00:00.000Z', 2],
    ['2026-11-28T23:59:59.999Z', 4],
    ['2026-11-27T12:00:00.000Z', 8],
    ['2026-11-29T00:00:00.001Z', 16],
    ['1969-12-31T23:59:59.999Z', 32],
  ] as const) countUsage(r, cost, at(iso));
  expect(r.usage_days).toMatchObject({ '2026-11-27': 9, '2026-11-28': 6, '2026-11-29': 16 });
  expect(periodStart('daily', at('2026-11-28T00:00:00.000Z'))).toBe('2026-11-28');
  expect(periodStart('daily', at('2026-11-27T23:59:59.999Z'))).toBe('2026-11-27');
  expect(periodStart('daily', at('1970-01-01T00:00:00.000Z'))).toBe('1970-01-01');
  expect(periodStart('daily', at('1969-12-31T23:59:59.999Z'))).toBe('1969-12-31');
  expect(periodStart('monthly', at('2026-12-01T00:00:00.000Z'))).toBe('2026-12-01');
  expect(() => periodStart('daily', Number.NaN)).toThrow(RangeError);
});

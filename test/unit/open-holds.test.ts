import { expect, it } from 'vitest';
import { OpenHolds } from '../../src/emulator/state/open-holds.js';

it('keeps the holds open by id, a settled one taken once, as state.json records them', () => {
  const open = new OpenHolds();
  open.set(3, 'default', 0.25);
  open.set(4, 'other', 0.5);
  open.set(9, 'default', 1);
  expect(open.take(4)).toBe(0.5);
  expect(open.take(4)).toBeUndefined();
  expect(open.take(0)).toBeUndefined();
  open.set(10, 'other', 2); // in the slot 4 left
  open.set(3, 'default', 0.75); // taken again: the newest stands
  expect(open.size).toBe(3);
  expect(open.record()).toEqual({ 3: { w: 'default', c: 0.75 }, 9: { w: 'default', c: 1 }, 10: { w: 'other', c: 2 } });
  for (const id of [3, 9, 10]) open.take(id);
  expect([open.size, open.record()]).toEqual([0, {}]);
});

import { round } from '../models/models.js';
import type { JournalEntry } from './charge-journal.js';
import { counted } from '../../internal/counted.js';
import type { OpenHolds } from './open-holds.js';

/**
 * At start: the requests' holds open at the last save, and those the journal took or settled since.
 * Those still open were in flight when the last process died (a kill -9 mid-stream): nothing was
 * answered in full, so each is given back, once (`settle` journals the release), and said on stderr.
 * Returns how many.
 */
export function releaseDeadHolds(open: OpenHolds, saved: Record<string, { w: string; c: number }> | undefined, unsaved: JournalEntry[], settle: (workspace: string, hold: number, cost: number) => void): number {
  for (const [hold, held] of Object.entries(saved ?? {})) open.set(Number(hold), held.w, held.c);
  for (const e of unsaved) {
    if (e.h !== undefined) open.set(e.h, e.w, e.c);
    if (e.r !== undefined) open.take(e.r);
  }
  const dead = Object.entries(open.record());
  let total = 0;
  for (const [hold, held] of dead) {
    settle(held.w, Number(hold), 0);
    total = round(total + held.c);
  }
  if (dead.length) process.stderr.write(`router serve: gave back the holds of ${counted(dead.length, 'request')} in flight when it last stopped ($${total})\n`);
  return dead.length;
}

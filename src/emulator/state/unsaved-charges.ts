/** Paid requests refused while charges are in memory only (billing.ts). */
import { HttpError, type Ctx } from '../http/http.js';

/**
 * 503 while charges are in memory only (their disk takes no more: a kill -9 would lose them), until a
 * save holding them lands: no answer is given that might never be paid. `undo` gives back the charge
 * just made, when it is the one that could not be written.
 */
export function refuseUnsaved(ctx: Ctx, undo?: () => void): void {
  if (ctx.store.chargesUnsaved?.() === undefined) return;
  undo?.();
  // Why (a path, the disk's state) is the operator's, said on stderr: not the caller's.
  throw new HttpError(503, 'The emulator cannot save charges to its disk now; paid requests are refused until it can, so that none is answered unpaid', undefined, { 'retry-after': '1' });
}

/**
 * Writes the charges made so far (the request's own, just made before its answer) and refuses as
 * refuseUnsaved when one could not be written (`undo` giving its own back): no answer begins unpaid.
 */
export function chargeWritten(ctx: Ctx, undo: () => void): void {
  ctx.store.flushCharges?.();
  refuseUnsaved(ctx, undo);
}

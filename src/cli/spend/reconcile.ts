/** `router usage --reconcile`'s engine: it lives in the kit (`src/kit/spend/reconcile.ts`). */
export * from '../../kit/spend/reconcile.js';

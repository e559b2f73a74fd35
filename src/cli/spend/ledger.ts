/** The usage ledger (one whole line appended per call): it lives in the kit (`src/kit/spend/ledger.ts`). */
export * from '../../kit/spend/ledger.js';

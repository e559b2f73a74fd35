/** The usage ledger read back record by record: it lives in the kit (`src/kit/spend/ledger-read.ts`). */
export * from '../../kit/spend/ledger-read.js';

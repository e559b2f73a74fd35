/** The cost bound of a call from the model list's prices: it lives in the kit (`src/kit/spend/cost-bound.ts`). */
export * from '../../kit/spend/cost-bound.js';

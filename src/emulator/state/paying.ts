import type { GenerationMark } from './store-api.js';

/** A charge's journal mark naming the generation it pays for (`g`), and its model (`m`) and provider (`p`) where known. */
export type Paying = { g?: string; m?: string; p?: string };

export const paying = (generation: GenerationMark | undefined): Paying | undefined =>
  generation === undefined ? undefined : { g: generation.id, ...(generation.model ? { m: generation.model } : {}), ...(generation.provider ? { p: generation.provider } : {}) };

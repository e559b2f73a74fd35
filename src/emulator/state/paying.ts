import type { GenerationMark } from './store-api.js';

/** A charge's journal mark naming the generation it pays for (`g`), and its model (`m`) and provider (`p`) where known. */
export type Paying = { g?: string; m?: string; p?: string };

export function paying(generation: GenerationMark | undefined): Paying | undefined {
  if (generation === undefined) return undefined;
  // Fields set one by one, not spread: measured, fewer bytes promoted per request.
  const mark: Paying = { g: generation.id };
  if (generation.model) mark.m = generation.model;
  if (generation.provider) mark.p = generation.provider;
  return mark;
}

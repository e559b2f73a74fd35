import type { DecisionRequest, DecisionResponse } from '../types.js';
import { answeringHead, Resource, type AnsweringOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

/** A decision's options: a decision answer carries no routing metadata, so `routerMetadata` is none of them. */
export type DecisionOptions = Omit<AnsweringOptions, 'routerMetadata'>;

/** The alpha Decisions operation, under `{api_root}/alpha`. */
export class Decisions extends Resource {
  /** `answering`: as chat.create's, the answer's generation id as its head arrives. */
  create(params: DecisionRequest, opts: DecisionOptions = {}): Promise<DecisionResponse> {
    const [call, head] = answeringHead(opts);
    return this.request('POST', '/decisions', call, { base: 'alpha', body: params, retry: 'paid', ...head }, SHAPES.decision);
  }
}

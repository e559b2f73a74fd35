import type { DecisionRequest, DecisionResponse } from '../types.js';
import { answeringHead, Resource, type AnsweringOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

/** The alpha Decisions operation, under `{api_root}/alpha`. */
export class Decisions extends Resource {
  /** `answering`: as chat.create's, the answer's generation id as its head arrives. */
  create(params: DecisionRequest, opts: AnsweringOptions = {}): Promise<DecisionResponse> {
    const [call, head] = answeringHead(opts);
    return this.request('POST', '/decisions', { ...call, routerMetadata: false }, { base: 'alpha', body: params, retry: 'paid', ...head }, SHAPES.decision);
  }
}

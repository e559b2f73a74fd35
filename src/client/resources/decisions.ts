import type { DecisionRequest, DecisionResponse } from '../types.js';
import { Resource, type CallOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

/** The alpha Decisions operation, under `{api_root}/alpha`. */
export class Decisions extends Resource {
  create(params: DecisionRequest, opts: CallOptions = {}): Promise<DecisionResponse> {
    return this.request('POST', '/decisions', { ...opts, routerMetadata: false }, { base: 'alpha', body: params, retry: 'paid' }, SHAPES.decision);
  }
}

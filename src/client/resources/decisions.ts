import type { DecisionRequest, DecisionResponse } from '../types.js';
import { Resource, callHeaders, type CallOptions } from './shared.js';

/** The alpha Decisions operation, under `{api_root}/alpha`. */
export class Decisions extends Resource {
  async create(params: DecisionRequest, opts: CallOptions = {}): Promise<DecisionResponse> {
    const { data } = await this.core.json<DecisionResponse>({
      method: 'POST',
      base: 'alpha',
      path: '/decisions',
      body: params,
      headers: callHeaders({ ...opts, routerMetadata: false }),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return data;
  }
}

/** Prices for the spend guard, from a model list (the service's, or one kept by the caller). */
import type { RouterClient } from '../../client/index.js';
import { readPricing, type Pricing } from './cost-bound.js';

/** A model as a list gives it: the fields prices are read from (a `Model` of `client.models.list()` is one). */
export interface ListedModel {
  id: string;
  pricing?: unknown;
  top_provider?: unknown;
  context_length?: unknown;
}

/**
 * The prices of models from a list (one kept, or a function that reads it); a model not in it, or one without
 * prices, is the sentence saying so.
 */
export function pricesFrom(list: readonly ListedModel[] | ((refresh: boolean) => Promise<readonly ListedModel[]>)): (models: string[], refresh: boolean) => Promise<Pricing[] | string> {
  return async (ids, refresh) => {
    const models = typeof list === 'function' ? await list(refresh) : list;
    const prices: Pricing[] = [];
    for (const id of ids) {
      const model = models.find((m) => m.id === id);
      if (!model) return `${id} is not in the model list`;
      const p = readPricing(model);
      if (typeof p === 'string') return p;
      prices.push(p);
    }
    return prices;
  };
}

/** The prices of the service's model list, read afresh on every check (the CLI keeps the list briefly instead). */
export function serviceListPrices(client: RouterClient, signal?: AbortSignal): (models: string[], refresh: boolean) => Promise<Pricing[] | string> {
  return pricesFrom(() => client.models.list({ signal }));
}

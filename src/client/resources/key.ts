import { Resource, type PlainCallOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

/** The calling key as `GET {base_url}/key` describes it (OpenAPI `getCurrentKey`): label, usage in USD, limit. */
export interface KeyInfo {
  label: string;
  /** Spending limit in USD, or null for none. */
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: string | null;
  usage: number;
  usage_daily?: number | undefined;
  usage_weekly?: number | undefined;
  usage_monthly?: number | undefined;
  is_free_tier?: boolean | undefined;
  is_management_key?: boolean | undefined;
  expires_at?: string | null | undefined;
  [key: string]: unknown;
}

export class Key extends Resource {
  /** What the service knows of the key this client calls with. */
  async get(opts: PlainCallOptions = {}): Promise<KeyInfo> {
    return (await this.request<{ data: KeyInfo }>('GET', '/key', opts, {}, SHAPES.keyInfo)).data;
  }
}

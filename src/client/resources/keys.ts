import { Resource, type PlainCallOptions } from './shared.js';
import type { AnswerShape } from '../answer-shape.js';
import { Key, type KeyInfo } from './key.js';
import { ProtocolError, ValidationError } from '../errors.js';
import { queryNames, wireQuery } from '../query-names.js';

/** When a key's limit starts again (midnight UTC; weeks from Monday), or null for never. */
export type KeyLimitReset = 'daily' | 'weekly' | 'monthly' | null;

/**
 * An API key as the management API describes it (the OpenAPI's `API Keys` objects). Never the key
 * itself: `label` is it masked, `hash` (its SHA-256) names it in get, update and delete.
 */
export interface ApiKey {
  hash: string;
  name: string;
  label: string;
  disabled: boolean;
  /** Spending limit in USD, or null for none. */
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: KeyLimitReset | string;
  include_byok_in_limit: boolean;
  /** USD spent with the key: in all, this UTC day, week (from Monday), month. */
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
  /** ISO 8601. */
  created_at: string;
  updated_at: string | null;
  expires_at?: string | null | undefined;
  creator_user_id: string | null;
  workspace_id: string;
  [key: string]: unknown;
}

/** What `create` sends (OpenAPI `createKeys`): a name, and optionally a limit, its reset and an expiry (UTC). */
export interface KeyCreate {
  name: string;
  limit?: number | null | undefined;
  limit_reset?: KeyLimitReset | undefined;
  include_byok_in_limit?: boolean | undefined;
  /** ISO 8601 in UTC (`Z`): the service refuses other time zones. */
  expires_at?: string | null | undefined;
  workspace_id?: string | undefined;
  creator_user_id?: string | null | undefined;
}

/** What `update` changes (OpenAPI `updateKeys`): only the fields given. */
export interface KeyUpdate {
  name?: string | undefined;
  disabled?: boolean | undefined;
  limit?: number | null | undefined;
  limit_reset?: KeyLimitReset | undefined;
  include_byok_in_limit?: boolean | undefined;
}

/** A created key: its description, and the key itself, which the service shows this once. */
export interface CreatedKey {
  data: ApiKey;
  key: string;
}

export interface KeyListQuery {
  /** Keys to skip (a page is the service's size, 100 on the emulator). */
  offset?: number | undefined;
  /** Disabled keys too (left out unless asked). */
  includeDisabled?: boolean | undefined;
  workspaceId?: string | undefined;
}

/** The query's names and the service's for them (OpenAPI `list` of `API Keys`). */
export const KEY_LIST_QUERY = queryNames<KeyListQuery>()({ offset: 'offset', includeDisabled: 'include_disabled', workspaceId: 'workspace_id' });

const KEY_FIELDS = { hash: 'string', name: 'string', label: 'string' } as const;
const ONE: AnswerShape = { what: 'an API key', fields: { data: 'object', ...Object.fromEntries(Object.entries(KEY_FIELDS).map(([k, v]) => [`data.${k}`, v])) } };
const CREATED: AnswerShape = { what: 'a created API key', fields: { ...ONE.fields, key: 'string' } };
const LIST: AnswerShape = { what: 'a list of API keys', fields: { data: 'array', 'data[]': 'object', ...Object.fromEntries(Object.entries(KEY_FIELDS).map(([k, v]) => [`data[].${k}`, v])) } };
const DELETED: AnswerShape = { what: 'a deleted API key', fields: {} };

/** A hash goes in the path, escaped (a `.` or `..` is refused by the core, as every path's). */
function path(hash: string): string {
  if (typeof hash !== 'string' || hash.trim() === '') throw new ValidationError('a key hash is needed (the "hash" of keys.list(); the SHA-256 of the key)');
  return `/keys/${encodeURIComponent(hash)}`;
}

/**
 * The workspace's API keys (`{base_url}/keys`, OpenAPI `API Keys`): a management key is what these
 * routes take; a standard key is refused with a 403 APIError. `current()` is any key's own (`GET /key`).
 */
export class Keys extends Resource {
  private readonly own = new Key(this.core);

  /** One page of keys from `offset` (disabled ones only with `includeDisabled`). */
  async list(query: KeyListQuery = {}, opts: PlainCallOptions = {}): Promise<ApiKey[]> {
    return (await this.request<{ data: ApiKey[] }>('GET', '/keys', opts, { query: wireQuery(query, KEY_LIST_QUERY) }, LIST)).data;
  }

  /** A new key: `key` is the key itself, shown by the service only in this answer. Not retried once it may have been made. */
  async create(body: KeyCreate, opts: PlainCallOptions = {}): Promise<CreatedKey> {
    return this.request<CreatedKey>('POST', '/keys', opts, { body, retry: 'unaccepted' }, CREATED);
  }

  async get(hash: string, opts: PlainCallOptions = {}): Promise<ApiKey> {
    return (await this.request<{ data: ApiKey }>('GET', path(hash), opts, {}, ONE)).data;
  }

  /** Changes the fields given; answers the key as it now is. */
  async update(hash: string, changes: KeyUpdate, opts: PlainCallOptions = {}): Promise<ApiKey> {
    return (await this.request<{ data: ApiKey }>('PATCH', path(hash), opts, { body: changes }, ONE)).data;
  }

  /**
   * Deletes the key: requests with it are refused from then on. Not retried once it may have been done.
   * An answer that does not say `deleted: true` is a ProtocolError: the key may still work.
   */
  async delete(hash: string, opts: PlainCallOptions = {}): Promise<void> {
    const answer = await this.request<{ deleted?: unknown }>('DELETE', path(hash), opts, { retry: 'unaccepted' }, DELETED);
    if (answer.deleted !== true) throw new ProtocolError(`the service did not say key ${hash} was deleted ("deleted" is ${JSON.stringify(answer.deleted) ?? 'missing'}): it may still work`);
  }

  /** The key this client calls with (`GET /key`, any key): label, usage, limit, whether it is a management key. */
  async current(opts: PlainCallOptions = {}): Promise<KeyInfo> {
    return this.own.get(opts);
  }
}

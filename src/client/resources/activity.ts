import { Resource, type PlainCallOptions } from './shared.js';
import type { AnswerShape } from '../answer-shape.js';
import { queryNames, wireQuery } from '../query-names.js';

/** One row of the activity: a UTC day, a model and an endpoint (OpenAPI `ActivityItem`). */
export interface ActivityItem {
  /** YYYY-MM-DD (UTC). */
  date: string;
  model: string;
  model_permaslug: string;
  endpoint_id: string;
  provider_name: string;
  /** USD spent. */
  usage: number;
  byok_usage_inference: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** With `groupBy: 'workspace'` only. */
  workspace_id?: string | undefined;
  [key: string]: unknown;
}

export interface ActivityQuery {
  /** One of the last 30 completed UTC days (YYYY-MM-DD; today is refused, 400); all 30 when left out. */
  date?: string | undefined;
  /** One key's activity: its hash, as `keys.list()` gives it. */
  apiKeyHash?: string | undefined;
  userId?: string | undefined;
  workspaceId?: string | undefined;
  groupBy?: 'workspace' | undefined;
}

/** The query's names and the service's for them (OpenAPI `getUserActivity`). */
export const ACTIVITY_QUERY = queryNames<ActivityQuery>()({ date: 'date', apiKeyHash: 'api_key_hash', userId: 'user_id', workspaceId: 'workspace_id', groupBy: 'group_by' });

const ACTIVITY: AnswerShape = { what: 'the activity', fields: { data: 'array', 'data[]': 'object', 'data[].date': 'string', 'data[].model': 'string', 'data[].usage': 'number', 'data[].requests': 'number' } };

/** What the workspace spent, by day, model and endpoint, over the last 30 completed UTC days, today not yet (`GET {base_url}/activity`, a management key). */
export class Activity extends Resource {
  async list(query: ActivityQuery = {}, opts: PlainCallOptions = {}): Promise<ActivityItem[]> {
    return (await this.request<{ data: ActivityItem[] }>('GET', '/activity', opts, { query: wireQuery(query, ACTIVITY_QUERY) }, ACTIVITY)).data;
  }
}

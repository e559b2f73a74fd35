import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { round } from '../models/models.js';
import type { ActivityItem } from '../../client/resources/activity.js';
import { namesWorkspace, workspaceUuid } from '../state/workspace-id.js';
import { chargedGenerations } from '../batches/batch-rules.js';

/** Completed UTC days `GET /v1/activity` covers: the 30 before today; today's calls show tomorrow, as the service has it. */
const DAYS = 30;
const DAY_MS = 86_400_000;

type Row = ActivityItem;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * The workspace's activity (OpenAPI `getUserActivity`) from the generations the emulator keeps: one
 * row per UTC day, model and endpoint (its provider) of the last 30 completed days (not today), newest day first; `date`,
 * `api_key_hash`, `workspace_id` (its own only, by its UUID) and `group_by=workspace` as the OpenAPI has them; `user_id` is a 400.
 */
export function activity(ctx: Ctx): Row[] {
  const q = ctx.url.searchParams;
  const now = ctx.store.now();
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const first = new Date(today - DAYS * DAY_MS).toISOString().slice(0, 10);
  const last = new Date(today - DAY_MS).toISOString().slice(0, 10);
  const date = q.get('date') ?? undefined;
  // The service refuses today's date (400 `Date must be within the last 30 (completed) UTC days`).
  if (date !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date)) || date < first || date > last)) {
    throw new HttpError(400, `Date must be within the last ${DAYS} (completed) UTC days: YYYY-MM-DD from ${first} to ${last}`, 'invalid_request');
  }
  const groupBy = q.get('group_by') ?? undefined;
  if (groupBy !== undefined && groupBy !== 'workspace') throw new HttpError(400, 'group_by must be workspace', 'invalid_request');
  // The OpenAPI's user_id is "only applicable for organization accounts": the emulator's are not (its /key says organization_id null).
  if (q.has('user_id')) throw new HttpError(400, 'user_id filters by an organization member: this account is not an organization', 'invalid_request');
  const workspace = q.get('workspace_id') ?? undefined;
  if (workspace !== undefined && !namesWorkspace(workspace, ctx.workspace)) throw new HttpError(404, `No workspace ${workspace}`, 'not_found');
  const key = q.get('api_key_hash') ?? undefined;
  const rows = new Map<string, Row>();
  const charged = chargedGenerations(ctx.store.batches);
  for (const g of ctx.store.allGenerations()) {
    if (g.workspace !== ctx.workspace || (key !== undefined && g.key !== key) || !charged(g)) continue;
    const d = g.data;
    const day = String(d.created_at ?? '').slice(0, 10);
    if (day < first || day > last || (date !== undefined && day !== date)) continue;
    const model = String(d.model);
    const provider = String(d.provider_name ?? 'unknown');
    const id = `${day}\n${model}\n${provider}`;
    let row = rows.get(id);
    if (!row) {
      row = { date: day, model, model_permaslug: model, endpoint_id: `${provider}/${model}`, provider_name: provider, usage: 0, byok_usage_inference: 0, requests: 0, prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 };
      if (groupBy) row.workspace_id = workspaceUuid(g.workspace);
      rows.set(id, row);
    }
    row.requests += 1;
    row.usage += num(d.total_cost);
    row.prompt_tokens += num(d.tokens_prompt);
    row.completion_tokens += num(d.tokens_completion);
    row.reasoning_tokens += num(d.native_tokens_reasoning);
  }
  // Costs move by whole units of 1e-10 USD: a row's sum is said as such, without float noise.
  for (const row of rows.values()) row.usage = round(row.usage);
  return [...rows.values()].sort((a, b) => (a.date === b.date ? a.model.localeCompare(b.model) || a.provider_name.localeCompare(b.provider_name) : a.date < b.date ? 1 : -1));
}

import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { keyHash, LIMIT_RESETS, limitRemaining, periodStart, usageSince } from '../state/key-usage.js';
import type { KeyRecord, KeySettings } from '../state/store-api.js';
import { namesWorkspace, workspaceUuid } from '../state/workspace-id.js';

/** Keys a page of `GET /v1/keys` holds. */
const KEYS_PAGE = 100;

/** What the OpenAPI's key answers share (`GET /v1/key` and the key objects): the label (the key masked), its limit, and usage in USD. */
export function keyDetails(r: KeyRecord, now: number) {
  const usage = usageSince(r);
  return {
    label: `${r.key.slice(0, 12)}...${r.key.slice(-4)}`,
    limit: r.limit ?? null,
    limit_remaining: limitRemaining(r, now),
    limit_reset: r.limit_reset ?? null,
    include_byok_in_limit: r.include_byok_in_limit ?? false,
    usage,
    usage_daily: usageSince(r, periodStart('daily', now)),
    usage_weekly: usageSince(r, periodStart('weekly', now)),
    usage_monthly: usageSince(r, periodStart('monthly', now)),
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
    creator_user_id: null,
    expires_at: r.expires_at ?? null,
  };
}

const isoSeconds = (s: number) => new Date(s * 1000).toISOString();

/** A key as the management API answers it (the OpenAPI's list, get, create and update `data`). */
function keyObject(r: KeyRecord, now: number) {
  // external_user: the key's end user, which the current SDK requires (null: none given).
  return { hash: keyHash(r.key), name: r.name, disabled: r.disabled ?? false, ...keyDetails(r, now), created_at: isoSeconds(r.created_at), updated_at: r.updated_at === undefined ? null : isoSeconds(r.updated_at), workspace_id: workspaceUuid(r.workspace), external_user: null };
}

/** The settings a create (`creating`) or update body gives, checked as the OpenAPI types them: 400 otherwise. */
function settingsOf(body: Record<string, unknown>, creating: boolean, now: number): KeySettings {
  const s: KeySettings = {};
  const bad = (why: string): never => {
    throw new HttpError(400, why, 'invalid_request');
  };
  if (creating || body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name === '') bad(creating ? 'name is required' : 'name must be a non-empty string');
    s.name = body.name as string;
  }
  if (body.limit !== undefined) {
    if (body.limit !== null && !(typeof body.limit === 'number' && Number.isFinite(body.limit) && body.limit >= 0)) bad('limit must be a number of USD, 0 or more, or null');
    s.limit = body.limit as number | null;
  }
  if (body.limit_reset !== undefined) {
    if (body.limit_reset !== null && !LIMIT_RESETS.includes(body.limit_reset as never)) bad('limit_reset must be daily, weekly, monthly or null');
    s.limit_reset = body.limit_reset as KeySettings['limit_reset'];
  }
  for (const flag of (creating ? ['include_byok_in_limit'] : ['include_byok_in_limit', 'disabled']) as ('include_byok_in_limit' | 'disabled')[]) {
    if (body[flag] === undefined) continue;
    if (typeof body[flag] !== 'boolean') bad(`${flag} must be true or false`);
    s[flag] = body[flag] as boolean;
  }
  if (creating && body.expires_at !== undefined && body.expires_at !== null) {
    const at = body.expires_at;
    if (typeof at !== 'string' || !/(Z|[+-]00:?00)$/.test(at) || Number.isNaN(Date.parse(at))) bad('expires_at must be an ISO 8601 date-time in UTC');
    if (Date.parse(at as string) <= now) bad('expires_at must be in the future');
    s.expires_at = new Date(Date.parse(at as string)).toISOString();
  }
  return s;
}

/** The caller's workspace's API key with this hash: 404 for none (management keys are not managed here). */
function keyByHash(ctx: Ctx): KeyRecord {
  const found = ctx.store.keysOf(ctx.workspace).find((k) => k.kind === 'standard' && keyHash(k.key) === ctx.params.hash);
  if (!found) throw new HttpError(404, `No API key with hash ${ctx.params.hash}`, 'not_found');
  return found;
}

/** A `workspace_id` (query or body) names the caller's workspace, the only one its management key reaches: 404 for another. */
function ownWorkspace(ctx: Ctx, id: unknown): void {
  if (id !== undefined && id !== null && !namesWorkspace(id, ctx.workspace)) throw new HttpError(404, `No workspace ${String(id)}`, 'not_found');
}

/**
 * The management API's keys (OpenAPI `API Keys`, management keys only): create (`limit`, `limit_reset`,
 * `include_byok_in_limit`, `expires_at`), list (100 a page from `offset`, disabled ones with
 * `include_disabled=true`), get, update (also `disabled`), delete. A key's `hash` is the SHA-256 of its text.
 */
export const keyRoutes = defineRoutes(() => [
  {
    method: 'POST',
    path: '/v1/keys',
    access: 'management',
    handler: async (ctx: Ctx) => {
      const body = await ctx.json<Record<string, unknown>>();
      const now = ctx.store.now();
      const { name, ...settings } = settingsOf(body, true, now);
      ownWorkspace(ctx, body.workspace_id);
      const key = ctx.store.addKey(ctx.workspace, 'standard', name!, settings);
      ctx.send(201, { data: { ...keyObject(ctx.store.findKey(key)!, now), updated_at: null }, key });
    },
  },
  {
    method: 'GET',
    path: '/v1/keys',
    access: 'management',
    handler: async (ctx: Ctx) => {
      const q = ctx.url.searchParams;
      const offset = q.get('offset') ?? '0';
      if (!/^\d+$/.test(offset)) throw new HttpError(400, 'offset must be a whole number, 0 or more', 'invalid_request');
      const disabledToo = q.get('include_disabled') ?? 'false';
      if (disabledToo !== 'true' && disabledToo !== 'false') throw new HttpError(400, 'include_disabled must be true or false', 'invalid_request');
      ownWorkspace(ctx, q.get('workspace_id') ?? undefined);
      const now = ctx.store.now();
      const keys = ctx.store.keysOf(ctx.workspace).filter((k) => k.kind === 'standard' && (disabledToo === 'true' || !k.disabled));
      ctx.send(200, { data: keys.slice(Number(offset), Number(offset) + KEYS_PAGE).map((k) => keyObject(k, now)) });
    },
  },
  {
    method: 'GET',
    path: '/v1/keys/:hash',
    access: 'management',
    handler: async (ctx: Ctx) => ctx.send(200, { data: keyObject(keyByHash(ctx), ctx.store.now()) }),
  },
  {
    method: 'PATCH',
    path: '/v1/keys/:hash',
    access: 'management',
    handler: async (ctx: Ctx) => {
      const record = keyByHash(ctx);
      const now = ctx.store.now();
      ctx.store.updateKey(record.key, settingsOf(await ctx.json<Record<string, unknown>>(), false, now));
      ctx.send(200, { data: keyObject(record, now) });
    },
  },
  {
    method: 'DELETE',
    path: '/v1/keys/:hash',
    access: 'management',
    handler: async (ctx: Ctx) => {
      ctx.store.updateKey(keyByHash(ctx).key, null);
      ctx.send(200, { deleted: true });
    },
  },
]);

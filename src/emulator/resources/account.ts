import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { listedModel, matchingModels, modelPage } from './model-list.js';
import { filteredModels } from './model-list-filters.js';
import { providersOf, servedUpstream } from './model-endpoints.js';
import { MODELS } from '../models/models.js';
import type { ProviderConfig } from '../providers/config.js';
import { keyDetails } from './keys.js';
import type { ChatGateway } from '../providers/types.js';
import { workspaceUuid } from '../state/workspace-id.js';

/** The real service's daily `:free` requests: 50, or 1000 once 10 credits were bought. The emulator enforces none. */
const freeModelDailyLimit = (credits: number) => (credits >= 10 ? 1000 : 50);

/**
 * The account operations of the real API that the emulator keeps: the model list (paged; its
 * embedding models; the user's, the same; its count), the calling key and credits (management keys only); keys.ts has the keys; and `POST /_emulator/models {page_size}`
 * (operator), the list's page size when a query names no limit, so that clients page through it.
 */
export const accountRoutes = defineRoutes((parts: { gateway?: ChatGateway; providers?: ProviderConfig[] }) => {
  /**
   * The operator's page size for a query of the model list without `offset` and `limit`
   * (`/_emulator/models`); unset: the whole list. Not the embeddings listing's: no paging of it was
   * seen, and the OpenAPI answers its whole list.
   */
  let pageSize: number | undefined;
  return [
    {
      method: 'GET',
      path: '/v1/models',
      access: 'any',
      handler: async (ctx: Ctx) => {
        const listed = filteredModels(ctx.url, parts.gateway?.listing() ?? MODELS.map(listedModel), { now: ctx.store.now() / 1000, providersOf: (id) => providersOf(parts.providers ?? [], id), upstream: (id) => servedUpstream(parts.providers ?? [], id) });
        ctx.send(200, modelPage(ctx.url, pageSize, listed));
      },
    },
    {
      method: 'GET',
      path: '/v1/embeddings/models',
      access: 'any',
      handler: async (ctx: Ctx) => ctx.send(200, modelPage(ctx.url, undefined, parts.gateway?.listing(), 'embeddings/models')),
    },
    {
      method: 'GET',
      path: '/v1/models/user',
      access: 'any',
      handler: async (ctx: Ctx) => ctx.send(200, modelPage(ctx.url, pageSize, parts.gateway?.listing(), 'models/user')),
    },
    {
      method: 'GET',
      path: '/v1/models/count',
      access: 'any',
      handler: async (ctx: Ctx) => ctx.send(200, { data: { count: matchingModels(ctx.url, parts.gateway?.listing()).length } }),
    },
    {
      method: 'POST',
      path: '/_emulator/models',
      access: 'operator',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ page_size?: unknown }>();
        if (!Number.isInteger(body.page_size) || (body.page_size as number) < 1 || (body.page_size as number) > 1000) throw new HttpError(400, 'page_size must be a whole number from 1 to 1000');
        pageSize = body.page_size as number;
        ctx.send(200, { page_size: pageSize });
      },
    },
    {
      method: 'GET',
      path: '/v1/key',
      access: 'any',
      handler: async (ctx: Ctx) => {
        // Usage is the key's own (its requests since it was made, and the batches it created).
        const freeLimit = freeModelDailyLimit(ctx.store.workspace(ctx.workspace).total_credits);
        ctx.send(200, {
          data: {
            ...keyDetails(ctx.key, ctx.store.now()),
            is_free_tier: false,
            is_management_key: ctx.key.kind === 'management',
            is_provisioning_key: ctx.key.kind === 'management',
            rate_limit: { requests: -1, interval: '10s', note: 'This field is deprecated and safe to ignore.' },
            // The current SDK requires these four. The emulator serves every model here, keeps no
            // regions and no organizations, and counts no free-model requests (it limits none).
            allowed_data_regions: ['global'],
            free_model_daily_requests: { limit: freeLimit, remaining: freeLimit, used: 0 },
            organization_id: null,
            workspace_id: workspaceUuid(ctx.workspace),
          },
        });
      },
    },
    {
      method: 'GET',
      path: '/v1/credits',
      access: 'management',
      handler: async (ctx: Ctx) => {
        const ws = ctx.store.workspace(ctx.workspace);
        ctx.send(200, { data: { total_credits: ws.total_credits, total_usage: ws.total_usage } });
      },
    },
  ];
});

import type { Ctx } from './http.js';
import { HttpError } from './http.js';
import type { RouteTable } from './http.js';
import { MODELS } from './models.js';
import { abilitiesOf } from './model-abilities.js';

/** The account operations of the real API that the emulator keeps: the model list, credits and keys (management keys only). */
export function accountRoutes(): RouteTable {
  return {
    'GET /v1/models': {
      access: 'any',
      handler: async (ctx: Ctx) => {
        ctx.send(200, {
          data: MODELS.map((m) => ({
            id: m.id,
            canonical_slug: m.id,
            name: m.id,
            created: 1_767_225_600,
            description: `${m.kind} model of the local emulator`,
            context_length: 131_072,
            pricing: { prompt: String(m.promptPrice), completion: String(m.completionPrice) },
            ...abilitiesOf(m),
          })),
        });
      },
    },
    'GET /v1/credits': {
      access: 'management',
      handler: async (ctx: Ctx) => {
        const ws = ctx.store.workspace(ctx.workspace);
        ctx.send(200, { data: { total_credits: ws.total_credits, total_usage: ws.total_usage } });
      },
    },
    'POST /v1/keys': {
      access: 'management',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ name?: unknown }>();
        if (typeof body.name !== 'string' || body.name === '') throw new HttpError(400, 'name is required');
        const key = ctx.store.addKey(ctx.workspace, 'standard', body.name);
        const record = ctx.store.findKey(key)!;
        ctx.send(201, { data: { name: record.name, created_at: new Date(record.created_at * 1000).toISOString(), disabled: false, hash: key.slice(-12) }, key });
      },
    },
  };
}

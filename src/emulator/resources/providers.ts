import type { Ctx } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { MODELS } from '../models/models.js';
import type { ProviderConfig } from '../providers/config.js';
import type { ChatGateway } from '../providers/types.js';

/** A provider as the OpenAPI's `listProviders` has it: no headquarters, datacenters or policies to point at. */
const provider = (slug: string, name: string) => ({ name, slug, privacy_policy_url: null, terms_of_service_url: null, status_page_url: null, headquarters: null, datacenters: null });

/** The providers that serve a listed model: the fake ones (unless a gateway turned them off), then a providers file's. */
function providers(gateway: ChatGateway | undefined, configured: ProviderConfig[]): Record<string, unknown>[] {
  const listed = new Set((gateway?.listing() ?? MODELS).map((m) => m.id));
  const local = [...new Set(MODELS.filter((m) => listed.has(m.id)).flatMap((m) => m.providers))];
  return [...local.map((slug) => provider(slug, `${slug} (fake models of router serve)`)), ...configured.map((p) => provider(p.name, p.name))];
}

/**
 * Read-only lists of the official OpenAPI outside api.md that a client asks at start (the SDKs'
 * `providers.list()`, `listImageModels`, `listVideosModels`): `GET /v1/providers`, and the image and
 * video generation models, of which the emulator has none (its painter is a chat model).
 */
export const providerRoutes = defineRoutes((parts: { gateway?: ChatGateway; providers?: ProviderConfig[] }) => [
  { method: 'GET', path: '/v1/providers', access: 'any', handler: async (ctx: Ctx) => ctx.send(200, { data: providers(parts.gateway, parts.providers ?? []) }) },
  { method: 'GET', path: '/v1/images/models', access: 'any', handler: async (ctx: Ctx) => ctx.send(200, { data: [] }) },
  { method: 'GET', path: '/v1/videos/models', access: 'any', handler: async (ctx: Ctx) => ctx.send(200, { data: [] }) },
]);

import { HttpError } from './http.js';

/**
 * The routes of the official OpenAPI that router serve does not serve (docs/emulator.md says why),
 * by path (`:id` for a path parameter) and method: asked, each is a 404 that says so, rather than a
 * bare "No route". test/conformance-openapi.test.ts keeps it equal to the OpenAPI's routes less the served ones.
 */
export const NOT_SERVED: Record<string, string> = {
  '/v1/audio/transcriptions': 'POST',
  '/v1/auth/keys': 'POST',
  '/v1/auth/keys/code': 'POST',
  '/v1/benchmarks': 'GET',
  '/v1/byok': 'GET POST',
  '/v1/byok/:id': 'DELETE GET PATCH',
  '/v1/classifications/task': 'GET',
  '/v1/credits/coinbase': 'POST',
  '/v1/datasets/app-rankings': 'GET',
  '/v1/datasets/rankings-daily': 'GET',
  '/v1/datasets/session-cost': 'GET',
  '/v1/files': 'GET POST',
  '/v1/files/:id': 'DELETE GET',
  '/v1/files/:id/content': 'GET',
  '/v1/guardrails': 'GET POST',
  '/v1/guardrails/:id': 'DELETE GET PATCH',
  '/v1/guardrails/:id/assignments/keys': 'GET POST',
  '/v1/guardrails/:id/assignments/keys/remove': 'POST',
  '/v1/guardrails/:id/assignments/members': 'GET POST',
  '/v1/guardrails/:id/assignments/members/remove': 'POST',
  '/v1/guardrails/assignments/keys': 'GET',
  '/v1/guardrails/assignments/members': 'GET',
  '/v1/images': 'POST',
  '/v1/images/models/:id/:id/endpoints': 'GET',
  '/v1/observability/destinations': 'GET POST',
  '/v1/observability/destinations/:id': 'DELETE GET PATCH',
  '/v1/organization/members': 'GET',
  '/v1/presets': 'GET',
  '/v1/presets/:id': 'GET',
  '/v1/presets/:id/chat/completions': 'POST',
  '/v1/presets/:id/messages': 'POST',
  '/v1/presets/:id/responses': 'POST',
  '/v1/presets/:id/versions': 'GET',
  '/v1/presets/:id/versions/:id': 'GET',
  '/v1/rerank': 'POST',
  '/v1/scim/group-mappings': 'GET POST',
  '/v1/scim/group-mappings/:id': 'DELETE GET PATCH',
  '/v1/scim/groups': 'GET',
  '/v1/videos': 'POST',
  '/v1/videos/:id': 'GET',
  '/v1/videos/:id/content': 'GET',
  '/v1/workspaces': 'GET POST',
  '/v1/workspaces/:id': 'DELETE GET PATCH',
  '/v1/workspaces/:id/budgets': 'GET',
  '/v1/workspaces/:id/budgets/:id': 'DELETE GET PUT',
  '/v1/workspaces/:id/members': 'GET',
  '/v1/workspaces/:id/members/add': 'POST',
  '/v1/workspaces/:id/members/remove': 'POST',
};

const patterns = Object.entries(NOT_SERVED).map(([path, methods]) => ({ pattern: new RegExp(`^${path.replace(/:id/g, '[^/]+')}$`), methods: methods.split(' ') }));

/** The 404 for a route the emulator does not have: one of the OpenAPI's said as such, else a bare "No route". */
export function noRoute(method: string, path: string): HttpError {
  const known = patterns.some((p) => p.methods.includes(method) && p.pattern.test(path));
  // Read by any HTTP client: no path of this package's docs (the CLI adds where its emulator page is).
  const why = known ? ': the service\'s OpenAPI has it; router serve does not serve it' : '';
  return new HttpError(404, `No route for ${method} ${path}${why}`, 'not_found');
}

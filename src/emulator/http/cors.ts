import type { IncomingMessage, ServerResponse } from 'node:http';

/** The headers a page's script may read from an answer (CORS hides all but a few otherwise). */
const EXPOSED = 'x-request-id, x-generation-id, x-router-metadata, x-openrouter-metadata, retry-after, allow, accept-encoding';
/** Asked for when a preflight names none: those the API and its SDKs send. */
const ALLOWED_HEADERS = 'authorization, x-api-key, anthropic-version, content-type, x-session-id, http-referer, x-title, x-openrouter-title, x-router-metadata, x-openrouter-metadata, x-router-fault';
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * A browser page of any origin may call the emulator (keys travel in `Authorization`, never in
 * cookies, so no credentials mode): every answer says so (http.ts writes these with each head),
 * and a preflight (`OPTIONS`) is a 204 that allows the methods and the request headers it asks for.
 */
export const CORS_HEADERS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED } as const;

export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const asked = req.headers['access-control-request-headers'];
  res.writeHead(204, {
    'access-control-allow-methods': ALLOWED_METHODS,
    // The headers the page asked for (an SDK's own, such as x-stainless-*), whatever they are.
    'access-control-allow-headers': asked ? asked : ALLOWED_HEADERS,
    'access-control-max-age': '86400',
    allow: ALLOWED_METHODS,
    vary: 'access-control-request-headers',
    ...CORS_HEADERS,
  });
  req.resume();
  res.end();
}

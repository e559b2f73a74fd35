/**
 * An API root with no path (http://host:8080): legitimate for a gateway mounted at the root path, but most often
 * the service's or `router serve`'s root without its /api (api.md: `{base_url}` is `{api_root}/v1`; the service's
 * OpenAPI `servers`: https://openrouter.ai/api/v1). Said in one line unless the root answers as the API.
 */
import type { IO } from '../../io/io.js';

export async function sayPathlessRoot(io: IO, root: string, from = 'api_root'): Promise<void> {
  const url = new URL(root);
  if (url.pathname !== '/' && url.pathname !== '') return;
  const [{ RouterClient, APIError }, { proxyFromEnv }, { withoutUserinfo }] = await Promise.all([import('../../../client/index.js'), import('../../../config/proxy.js'), import('../../../internal/userinfo.js')]);
  const client = new RouterClient({ apiRoot: root, keyless: true, maxRetries: 0, timeoutMs: 3000, proxy: proxyFromEnv(io.env, root) });
  // Any answer of the API's own but a 404 (a 401 for no key too) says the root is one; a web server's
  // own error page (a 500 or 401 of HTML, no error.code) does not.
  const answers = await client.models.list({ signal: io.interrupt }).then(
    () => true,
    (err: unknown) => err instanceof APIError && err.status !== 404 && err.code !== undefined,
  );
  await client.close();
  if (answers) return;
  const shown = withoutUserinfo(root);
  io.note(`warning: ${from} ${shown} has no path and ${shown}/v1/models does not answer: an API root is most often the URL before /v1, such as ${shown}/api as router serve prints it; set all the same`);
}

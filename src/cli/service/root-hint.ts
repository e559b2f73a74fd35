/**
 * A 404 from an API root without its /api (`https://openrouter.ai/v1`, `http://127.0.0.1:8080`): the
 * service's and `router serve`'s roots end in /api (api.md: `{base_url}` is `{api_root}/v1`). Where the
 * root with /api answers as the API, the error names the setting the root came from and the value to
 * put there; looked up only after such a 404, briefly.
 */
import { APIError } from '../../client/errors.js';
import { sourceName, type Settings } from '../../config/settings.js';
import { withinMs } from '../../internal/abort-fanout.js';

/** How long the root with /api is given to answer, in all. */
const LOOKUP_MS = 3000;

/** The root with /api in place of a trailing /v1, or after a root with no path; none for a root ending in /api or with another path. */
export function rootWithApi(root: string): string | undefined {
  const url = new URL(root);
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '' && path !== '/v1') return undefined;
  url.pathname = '/api';
  url.search = '';
  url.hash = '';
  return url.href;
}

export async function addApiRootHint(err: unknown, settings: Settings, env: NodeJS.ProcessEnv): Promise<void> {
  const from = settings.from.apiRoot;
  if (!(err instanceof APIError) || err.status !== 404 || !from || !settings.apiRoot || (err as { hint?: unknown }).hint !== undefined) return;
  const fixed = rootWithApi(settings.apiRoot);
  if (!fixed) return;
  const [{ RouterClient }, { proxyFromEnv }, { withoutUserinfo }] = await Promise.all([import('../../client/index.js'), import('../../config/proxy.js'), import('../../internal/userinfo.js')]);
  const client = new RouterClient({ apiRoot: fixed, keyless: true, maxRetries: 0, proxy: proxyFromEnv(env, fixed) });
  // Any answer of the API's own but a 404 (a 401 for no key too) says the root with /api is the API.
  // One bound on the whole lookup (the client's timeoutMs bounds each wait, a trickled body not at all).
  const answers = await withinMs(new AbortController().signal, LOOKUP_MS, (signal) => client.models.list({ signal })).then(
    () => true,
    (e: unknown) => e instanceof APIError && e.status !== 404 && e.code !== undefined,
  );
  await client.close();
  if (!answers) return;
  const shown = withoutUserinfo(fixed);
  const where = from.kind === 'profile' ? `router config set api_root ${shown}${from.name === 'default' ? '' : ` --profile ${from.name}`}` : from.kind === 'flag' ? `give --api-root ${shown}` : from.kind === 'env' ? `set ${from.name}=${shown}` : `put ${shown} there`;
  Object.assign(err, { hint: ` (the API root from ${sourceName(from)} lacks /api: ${where})` });
}

/**
 * Stoplight Prism serving the official OpenAPI of the deployed service (startPrism), behind a small proxy that puts
 * its paths under /api/v1 where the deployed service has them, and a router env on that proxy: started before the
 * file's tests, closed after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startPrism, type PrismUpstream } from './prism-upstream.js';

export interface PrismApi {
  /** router's env on the proxy (API root, API key, config and state folders). */
  env: Record<string, string>;
  /** A folder of the file's own, removed after. */
  home: string;
  /** Where Prism itself listens (paths at its root). */
  prismPort: number;
  /** A status for the proxy to ask Prism for (its `Prefer: code=N`): the OpenAPI's error example for it. */
  preferCode: number | undefined;
  /** Prism's `Prefer: dynamic=true`: answers made up from the OpenAPI's schemas, not its examples. */
  preferDynamic: boolean;
}

/** Call at a test file's top level: the returned object is filled in beforeAll; set its prefer fields in a test. */
export function prismApiForFile(): PrismApi {
  const api: PrismApi = { env: {}, home: '', prismPort: 0, preferCode: undefined, preferDynamic: false };
  let prism: PrismUpstream | undefined;
  beforeAll(async () => {
    prism = await startPrism();
    api.prismPort = Number(new URL(prism.url).port);
    const up = prism;
    const proxy = await up.listen((req, res) => {
      const prefer = [api.preferCode === undefined ? '' : `code=${api.preferCode}`, api.preferDynamic ? 'dynamic=true' : ''].filter(Boolean).join(', ');
      req.url = req.url!.replace(/^\/api\/v1/, '');
      up.toPrism(req, prefer ? { prefer } : {}, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      }, () => res.destroy());
    });
    api.home = mkdtempSync(join(tmpdir(), 'router-prism-'));
    api.env = {
      ROUTER_API_ROOT: `${proxy}/api`,
      ROUTER_API_KEY: 'sk-prism-test-0123456789',
      ROUTER_CONFIG_DIR: join(api.home, 'config'),
      ROUTER_STATE_DIR: join(api.home, 'state'),
    };
  });
  afterAll(() => {
    prism?.close();
    if (api.home) rmSync(api.home, { recursive: true, force: true });
  });
  return api;
}

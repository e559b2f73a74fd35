import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { localUpstream, type LocalUpstream } from './upstreams.js';

type Answer = Parameters<typeof localUpstream>[0];

export interface GatewayForAllOptions<N extends string> {
  /** The temp folder's name start (`router-…-`). */
  prefix: string;
  /** Local upstreams by name, each answering with its handler. */
  upstreams: Record<N, Answer>;
  /** The providers file's text, given each upstream's base URL (`…/v1`) by name. */
  providers: (baseUrls: Record<N, string>) => string;
  /** The environment the providers file reads its keys from. */
  env?: Record<string, string>;
  /** More of the gateway's options; its state is `dir/gateway` unless `stateName` says. */
  gateway?: Partial<EmulatorOptions>;
  stateName?: string;
}

/**
 * A gateway (`router serve --providers`, in-process over real HTTP) in front of local upstreams, in a
 * temp folder, started before the tests of the file (or describe block) and closed after them: the
 * gateway, every upstream, the folder, also what had started when the set-up failed halfway.
 */
export function gatewayForAll<N extends string>(o: GatewayForAllOptions<N>) {
  let dir = '';
  let gateway: Emulator | undefined;
  const upstreams = {} as Record<N, LocalUpstream>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), o.prefix));
    const baseUrls = {} as Record<N, string>;
    for (const name of Object.keys(o.upstreams) as N[]) {
      upstreams[name] = await localUpstream(o.upstreams[name]);
      baseUrls[name] = upstreams[name].baseUrl;
    }
    const config = parseProviders(o.providers(baseUrls), o.env ?? {});
    gateway = await startEmulator({ ...o.gateway, stateDir: join(dir, o.stateName ?? 'gateway'), port: 0, gateway: { ...o.gateway?.gateway, config } });
  });
  afterAll(async () => {
    await gateway?.close();
    for (const u of Object.values<LocalUpstream>(upstreams)) await u.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const started = () => {
    if (!gateway) throw new Error('gatewayForAll: read before its beforeAll started the gateway');
    return gateway;
  };
  return {
    /** The temp folder. */
    get dir() {
      return dir;
    },
    get gateway() {
      return started();
    },
    /** The gateway's first API key. */
    get apiKey() {
      return started().store.firstKeys().apiKey;
    },
    upstream: (name: N) => upstreams[name],
  };
}

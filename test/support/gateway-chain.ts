import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';

/** A gateway in front of another `router serve`, and the small servers its providers file names beside it. */
export interface GatewayChain {
  dir: string;
  /** The `router serve` the gateway speaks to only over HTTP, as an OpenAI-compatible upstream. */
  upstream: Emulator;
  gateway: Emulator;
  /** The gateway's key of the chosen kind. */
  key: string;
  /** The upstream's key of the same kind, given to the gateway as UP_KEY. */
  upKey: string;
  /** Closes the gateway, the upstream and `locals`, and removes the folder. */
  close(): Promise<void>;
}

export interface GatewayChainOptions {
  /** Which of the first keys the gateway is asked with and hands the upstream: the API key (default) or the management key. */
  keys?: 'apiKey' | 'managementKey';
  /** Servers the providers file names (failing, stalled, breaking upstreams): closed with the chain. */
  locals?: { close(): Promise<void> }[];
  /** More of the gateway's environment beside UP_KEY (other keys the providers file reads). */
  env?: Record<string, string>;
  gateway?: Partial<EmulatorOptions>;
}

/**
 * Starts an emulator (the upstream), then a gateway from `providers(upstream's API root)`, reading UP_KEY as the
 * upstream's key, each in a folder of its own under one temp folder named after `name`.
 */
export async function startGatewayChain(name: string, providers: (upstreamRoot: string) => string, options: GatewayChainOptions = {}): Promise<GatewayChain> {
  const kind = options.keys ?? 'apiKey';
  const dir = mkdtempSync(join(tmpdir(), `router-${name}-`));
  const upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const upKey = upstream.store.firstKeys()[kind];
  let gateway: Emulator;
  try {
    const config = parseProviders(providers(upstream.apiRoot), { UP_KEY: upKey, ...options.env });
    gateway = await startEmulator({ ...options.gateway, stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  } catch (err) {
    // A file whose set-up failed has nothing to close in its afterAll: nothing of it is left running.
    await upstream.close();
    for (const l of options.locals ?? []) await l.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    upstream,
    gateway,
    key: gateway.store.firstKeys()[kind],
    upKey,
    close: async () => {
      await gateway.close();
      await upstream.close();
      for (const l of options.locals ?? []) await l.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { SETTLE } from './until.js';

/**
 * The three ways a client we did not write meets `router serve`: the spec flavour, `--flavor deployed`, and a
 * gateway (`--providers`) whose one provider is another `router serve`, spoken to only over HTTP.
 */
export const TARGETS = ['spec', 'deployed', 'gateway'] as const;
export type TargetKind = (typeof TARGETS)[number];
export type ModelKind = 'echo' | 'lorem' | 'tools' | 'thinker' | 'embed';

/** The gateway's prices (USD a token) for its upstream's models: a cost it reports can be checked against them. */
export const GATEWAY_PRICES = { echo: { prompt: 0.001, completion: 0.002 }, lorem: { prompt: 0.0001, completion: 0.0002 }, embed: { prompt: 0.0001 } };

export interface Generation {
  model: string;
  provider_name: string;
  total_cost: number;
  tokens_prompt: number;
  tokens_completion: number;
  cancelled: boolean;
}

export interface Target {
  kind: TargetKind;
  /** The OpenAI-style base URL, ending in /v1. */
  baseURL: string;
  apiKey: string;
  emulator: Emulator;
  model(kind: ModelKind): string;
  /** The provider name a generation of this target reports. */
  providers: string[];
  /** A key of a new workspace holding `credits` USD. */
  keyWith(workspace: string, credits: number): string;
  /** The generation `id`, once it is kept. */
  generation(id: string, key?: string): Promise<Generation>;
  /** The next `times` chat requests are answered 429 with Retry-After: 1 (on a gateway, by its upstream). */
  rateLimitNext(times: number): Promise<void>;
  close(): Promise<void>;
}

async function postFaults(emulator: Emulator, faults: string[]): Promise<void> {
  const res = await fetch(`${emulator.apiRoot}/_emulator/faults`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.store.firstKeys().managementKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ faults }),
  });
  if (res.status !== 200) throw new Error(`POST /_emulator/faults: HTTP ${res.status}: ${await res.text()}`);
  await res.text();
}

export async function startTarget(kind: TargetKind): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), `router-client-${kind}-`));
  let upstream: Emulator | undefined;
  let emulator: Emulator;
  if (kind === 'gateway') {
    upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
    const p = GATEWAY_PRICES;
    const yaml = `
providers:
  - name: up
    base_url: ${upstream.apiRoot}/v1
    api_key_env: UP_KEY
    responses: true
    models: { test/echo: local/echo, test/lorem: local/lorem, test/tools: local/tools, test/thinker: local/thinker }
    embedding_models: { test/embed: local/embed }
    prices:
      test/echo: { prompt: ${p.echo.prompt}, completion: ${p.echo.completion} }
      test/lorem: { prompt: ${p.lorem.prompt}, completion: ${p.lorem.completion} }
      test/embed: { prompt: ${p.embed.prompt} }
`;
    const config = parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey });
    emulator = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  } else {
    emulator = await startEmulator({ stateDir: join(dir, 'state'), port: 0, ...(kind === 'deployed' ? { flavor: 'deployed' as const } : {}) });
  }
  const apiKey = emulator.store.firstKeys().apiKey;
  return {
    kind,
    baseURL: `${emulator.apiRoot}/v1`,
    apiKey,
    emulator,
    model: (m) => `${upstream ? 'test' : 'local'}/${m}`,
    providers: upstream ? ['up'] : ['local-alpha', 'local-beta'],
    keyWith: (workspace, credits) => emulator.store.createWorkspace(workspace, credits).apiKey,
    generation: (id, key = apiKey) =>
      vi.waitFor(async () => {
        const res = await fetch(`${emulator.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
        if (res.status !== 200) throw new Error(`GET /v1/generation: HTTP ${res.status}`);
        return ((await res.json()) as { data: Generation }).data;
      }, SETTLE),
    rateLimitNext: (times) => postFaults(upstream ?? emulator, [`429,retry_after=1,times=${times},path=/chat/completions`]),
    close: async () => {
      await emulator.close();
      await upstream?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

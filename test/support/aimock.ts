import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LLMock } from '@copilotkit/aimock';
import { runCliInProcess, type CliResult } from './cli-env.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';

/**
 * aimock (`@copilotkit/aimock`, an OpenAI-compatible mock we did not write: fixtures, streaming, tool calls,
 * error injection) on 127.0.0.1, port 0, with the fixtures `setup` gives it; its OpenAI base is `url/v1`.
 */
export async function startAimock(setup: (mock: LLMock) => void): Promise<LLMock> {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'silent' });
  setup(mock);
  await mock.start();
  return mock;
}

export interface AimockGateway {
  gateway: Emulator;
  dir: string;
  key: string;
  /** POST `path` under /v1 with the gateway's API key (and routing metadata asked for, unless `metadata` is false): status and text. */
  post(path: string, body: unknown, metadata?: boolean): Promise<{ status: number; text: string; headers: Headers }>;
  /** `router ARGS` in this process against the gateway with its API key; config and state in `dir`. */
  cli(args: string[]): Promise<CliResult>;
  close(): Promise<void>;
}

/**
 * `router serve --providers FILE` in this process: the file written from `providers` (YAML text) into a
 * temp folder of its own and read as `serve` reads it; `options` are the rest of serve's settings.
 */
export async function aimockGateway(providers: string, options: Partial<EmulatorOptions> & { cassettes?: { dir: string; mode: 'record' | 'replay' } } = {}): Promise<AimockGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'router-aimock-'));
  const file = join(dir, 'providers.yaml');
  writeFileSync(file, providers);
  const { cassettes, ...rest } = options;
  const config = parseProviders(providers, {}, { keys: cassettes?.mode === 'replay' ? 'unused' : 'required' });
  const gateway = await startEmulator({ batchDelayMs: 0, ...rest, stateDir: join(dir, 'state'), port: 0, gateway: { config, ...(cassettes ? { cassettes: { ...cassettes, timing: 0 } } : {}) } });
  const key = gateway.store.firstKeys().apiKey;
  return {
    gateway,
    dir,
    key,
    post: async (path, body, metadata = true) => {
      const res = await fetch(`${gateway.apiRoot}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(metadata ? { 'x-router-metadata': 'enabled' } : {}) }, body: JSON.stringify(body) });
      return { status: res.status, text: await res.text(), headers: res.headers };
    },
    cli: (args) =>
      runCliInProcess(args, { env: { ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: key, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'cli-state') } }),
    close: async () => {
      await gateway.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The data of each event of an SSE text, `[DONE]` as itself, the rest parsed. */
export const sseData = (text: string): any[] =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));

/** The text of a chat stream's content deltas, joined. */
export const streamedText = (text: string): string =>
  sseData(text)
    .map((e) => (e === '[DONE]' ? '' : (e.choices?.[0]?.delta?.content ?? '')))
    .join('');

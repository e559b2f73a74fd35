import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// router against a service we did not write: Stoplight Prism serving the official OpenAPI of the
// deployed service, which answers each route with the OpenAPI's own example and refuses (422) a
// request the OpenAPI does not allow. Prism serves the paths at its root; the small proxy here puts
// them under /api/v1, where the deployed service has them.
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const OPENAPI = resolve(root, '..', 'shared', 'reference', 'openrouter-openapi.yaml');
const PRISM = join(root, 'node_modules', '.bin', 'prism');

let prism: ChildProcess;
let proxy: Server;
let env: Record<string, string>;
let home: string;
let prismPort: number;

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });
}

async function waitForPrism(port: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const up = await new Promise<boolean>((ok) => {
      const r = request({ host: '127.0.0.1', port, path: '/credits', headers: { authorization: 'Bearer x' } }, (res) => {
        res.resume();
        ok(res.statusCode === 200);
      });
      r.on('error', () => ok(false));
      r.end();
    });
    if (up) return;
    if (prism.exitCode !== null) throw new Error(`prism exited with ${prism.exitCode}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('prism did not start');
}

beforeAll(async () => {
  const port = (prismPort = await freePort());
  prism = spawn(PRISM, ['mock', '-h', '127.0.0.1', '-p', String(port), OPENAPI], { stdio: 'ignore' });
  await waitForPrism(port);
  proxy = createServer((req, res) => {
    const up = request({ host: '127.0.0.1', port, path: req.url!.replace(/^\/api\/v1/, ''), method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  home = mkdtempSync(join(tmpdir(), 'router-prism-'));
  env = {
    ROUTER_API_ROOT: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api`,
    ROUTER_API_KEY: 'sk-prism-test-0123456789',
    ROUTER_CONFIG_DIR: join(home, 'config'),
    ROUTER_STATE_DIR: join(home, 'state'),
  };
}, 180_000);

afterAll(() => {
  prism?.kill('SIGKILL');
  proxy?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('router against Prism serving the official OpenAPI', () => {
  it('chat: the request passes the OpenAPI, the example answer is printed', async () => {
    const r = await runCli(['chat', '--no-stream', '--model', 'openai/gpt-4', 'hi'], { env });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('The capital of France is Paris.\n');
    expect(r.code).toBe(0);
  });

  it('responses, embed: requests the OpenAPI allows, answers it describes', async () => {
    const resp = await runCli(['responses', '--no-stream', '--model', 'openai/gpt-4', 'hi'], { env });
    expect(resp.code, resp.stderr).toBe(0);
    expect(resp.stdout.trim().length).toBeGreaterThan(0);
    const emb = await runCli(['embed', '--model', 'openai/text-embedding-3-small', 'hello'], { env });
    expect(emb.code, emb.stderr).toBe(0);
    expect(JSON.parse(emb.stdout).data[0].embedding.length).toBeGreaterThan(0);
  });

  it('models, credits and auth status read the OpenAPI examples', async () => {
    const models = await runCli(['models', '--json'], { env });
    expect(models.code, models.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(models.stdout))).toContain('openai/gpt-4');
    const credits = await runCli(['credits', '--json'], { env });
    expect(credits.code, credits.stderr).toBe(0);
    expect(JSON.parse(credits.stdout)).toMatchObject({ total_credits: expect.any(Number) });
    const auth = await runCli(['auth', 'status'], { env });
    expect(auth.code, auth.stderr).toBe(0);
    expect(auth.stdout).toMatch(/accepted by GET \/v1\/key/);
  });

  it('generation ID reads the OpenAPI example: cost, tokens, provider; errors name the request', async () => {
    const r = await runCli(['generation', '--json', 'gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: expect.any(String), total_cost: expect.any(Number) });
    const miss = await runCli(['api', '/v1/nowhere'], { env });
    expect(miss.code).toBe(5);
    expect(miss.stderr).toMatch(/^error: GET \/api\/v1\/nowhere: 404/m);
  });
});

describe('router serve as a gateway over Prism (an upstream we did not write)', () => {
  let gateway: Emulator;
  beforeAll(async () => {
    const config = parseProviders(`providers:\n  - { name: prism, base_url: "http://127.0.0.1:${prismPort}", api_key_env: PRISM_KEY, models: { test/gpt4: openai/gpt-4 }, prices: { test/gpt4: { prompt: 0.001, completion: 0.002 } } }\n`, { PRISM_KEY: 'sk-upstream-prism' });
    gateway = await startEmulator({ stateDir: join(home, 'gateway'), port: 0, gateway: { config } });
  });
  afterAll(() => gateway?.close());

  it('a chat through the gateway is answered by the upstream and charged at the configured prices', async () => {
    const { apiKey } = gateway.store.firstKeys();
    const ws = gateway.store.findKey(apiKey)!.workspace;
    const before = gateway.store.balance(ws);
    const r = await runCli(['chat', '--no-stream', '--model', 'test/gpt4', 'hi'], { env: { ...env, ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: apiKey } });
    expect(r.stdout, r.stderr).toBe('The capital of France is Paris.\n');
    expect(r.code).toBe(0);
    // The OpenAPI example's usage: 25 prompt and 10 completion tokens.
    expect(before - gateway.store.balance(ws)).toBeCloseTo(25 * 0.001 + 10 * 0.002, 6);
  });
});


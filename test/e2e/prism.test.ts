import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { waitBound } from '../support/until.js';
import { childPort } from '../support/upstreams.js';
import { RouterClient } from '../../src/client/index.js';

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
/** A status for the proxy to ask Prism for (its `Prefer: code=N`): the OpenAPI's error example for it. */
let preferCode: number | undefined;
/** Prism's `Prefer: dynamic=true`: answers made up from the OpenAPI's schemas, not its examples. */
let preferDynamic = false;


async function waitForPrism(port: number): Promise<void> {
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
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
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('prism did not start within the hook\'s bound');
}

beforeAll(async () => {
  const port = (prismPort = await childPort());
  prism = spawn(PRISM, ['mock', '-h', '127.0.0.1', '-p', String(port), OPENAPI], { stdio: 'ignore' });
  await waitForPrism(port);
  proxy = createServer((req, res) => {
    const prefer = [preferCode === undefined ? '' : `code=${preferCode}`, preferDynamic ? 'dynamic=true' : ''].filter(Boolean).join(', ');
    const headers = prefer ? { ...req.headers, prefer } : req.headers;
    const up = request({ host: '127.0.0.1', port, path: req.url!.replace(/^\/api\/v1/, ''), method: req.method, headers }, (r) => {
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
});

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

describe("every option of chat, responses, embed and speak sends a request the OpenAPI allows", () => {
  // Prism refuses (400) a body its operation's schema does not allow: each command exits 0 only if what it sent passes.
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082', 'hex');
  let files: { tools: string; png: string; wav: string; turns: string };
  beforeAll(() => {
    // In the suite's own temporary folder, removed with it.
    files = { tools: join(home, 'tools.json'), png: join(home, 'p.png'), wav: join(home, 'clip.wav'), turns: join(home, 'turns.json') };
    writeFileSync(files.tools, JSON.stringify([{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }]));
    writeFileSync(files.png, PNG);
    writeFileSync(files.wav, Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]));
    writeFileSync(files.turns, JSON.stringify([{ speaker: 'a', text: 'hi' }, { speaker: 'b', text: 'yo' }]));
  });
  const M = ['--no-stream', '--model', 'openai/gpt-4'];
  // Prism's example model list has openai/gpt-4 take text only, and an image for it is refused before sending: a model it does not list is sent one.
  const SEEING = ['--no-stream', '--model', 'openai/gpt-4o'];
  const routing = ['--session', 's', '--user', 'u', '--provider-only', 'x', '--no-fallbacks', '--router-metadata'];

  it('every option set passes; a departure api.md allows (multi-speaker turns) is refused, so the check can fail', async () => {
    const runs = (): string[][] => [
      ['chat', ...M, '-t', '0.5', '--top-p', '0.9', '--max-tokens', '5', '--top-k', '3', '--min-p', '0.1', '--top-a', '0.2', '--frequency-penalty', '0.1', '--presence-penalty', '0.2', '--repetition-penalty', '1.1', '--seed', '3', '--stop', 'x', '--logprobs', '--top-logprobs', '2', '--logit-bias', '50=1', 'hi'],
      ['chat', ...M, '--response-format', 'json_object', '--reasoning-effort', 'low', '--service-tier', 'flex', '--models', 'a/b', '--provider-order', 'y,z', '--provider-ignore', 'w', '--metadata', 'a=b', ...routing, 'hi'],
      ['chat', ...SEEING, '--plugin', 'web,max_results=3', '--modalities', 'text,image', '--tools', files.tools, '-a', files.png, '-s', 'sys', 'hi'],
      ['responses', ...M, '-t', '0.3', '--top-p', '0.8', '--instructions', 'be', '--max-output-tokens', '50', '--reasoning-effort', 'low', '--reasoning-summary', 'auto', '--verbosity', 'low', '--service-tier', 'flex', '--metadata', 'a=b', '--models', 'a/b', ...routing, 'hi'],
      ['responses', ...SEEING, '--tools', files.tools, '--tool-choice', 'required', '--text-format', 'json_object', '-a', files.png, '--web', '--stop-when', 'step_count=2', '--max-tool-calls', '2', 'hi'],
      ['embed', '--model', 'openai/text-embedding-3-small', '--dimensions', '8', '--encoding-format', 'base64', '--input-type', 'search_query', '--user', 'u', '--provider-only', 'x', '--no-fallbacks', '--router-metadata', 'hello'],
      ['speak', '--model', 'openai/gpt-4o-mini-tts', '--voice', 'alloy', '--format', 'pcm', '--speed', '1.2', '--instructions', 'calm', ...routing, '--reference-audio', files.wav, '--reference-text', 'words', '-o', join(home, 'o.pcm'), 'hi'],
    ];
    const failed: string[] = [];
    for (const args of runs()) {
      const r = await runCli([...args, '--max-retries', '0'], { env });
      if (r.code !== 0) failed.push(`${args.slice(0, 3).join(' ')}: ${r.stderr.trim()}`);
    }
    expect(failed).toEqual([]);
    // api.md's multi-speaker input (a list of turns) is not in the OpenAPI, whose input is a string.
    const turns = await runCli(['speak', '--model', 'openai/gpt-4o-mini-tts', '--voice', 'alloy', '--turns', files.turns, '-o', join(home, 't.mp3'), '--max-retries', '0'], { env });
    expect(turns.stderr).toMatch(/^error: POST \/api\/v1\/audio\/speech: 400 Bad Request/m);
  });
});

describe('router keys and usage --activity against Prism (OpenAPI API Keys, getUserActivity)', () => {
  // The OpenAPI's example key; Prism refuses (422) a request its operation does not allow.
  const HASH = 'f01d52606dc8f0a8303a7b5cc3fa07109c2e346cec7c0a16b40de462992ce943';
  const managed = () => ({ ...env, ROUTER_MANAGEMENT_KEY: 'sk-prism-management-0123456789' });

  it('list, create, get, update, delete and current send what the OpenAPI allows and read its examples', async () => {
    const list = await runCli(['keys', 'list', '--include-disabled', '--offset', '0'], { env: managed() });
    expect(list.stderr).toBe('');
    expect(list.stdout).toBe(`${HASH}\tMy Production Key\tProduction API Key\tenabled\t100\t74.5\tmonthly\t25.5\t2027-12-31T23:59:59Z\t2025-08-24T10:30:00Z\n`);
    expect(list.code).toBe(0);
    const made = await runCli(['keys', 'create', 'ci', '--limit', '5', '--limit-reset', 'daily', '--expires-at', '2099-12-31', '--include-byok-in-limit'], { env: managed() });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^sk-or-v1-[0-9a-f]{64}\n$/);
    expect(made.stderr).toContain(`update and delete: ${HASH}`);
    const got = await runCli(['keys', 'get', HASH, '--json'], { env: managed() });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ hash: HASH, limit_reset: 'monthly', expires_at: '2027-12-31T23:59:59Z' });
    for (const changes of [['--limit', 'none', '--limit-reset', 'none', '--disabled', '--no-include-byok-in-limit', '--name', 'z'], ['--enabled', '--limit', '3', '--limit-reset', 'weekly', '--include-byok-in-limit']]) {
      const updated = await runCli(['keys', 'update', HASH, ...changes, '--json'], { env: managed() });
      expect(updated.code, `${changes.join(' ')}: ${updated.stderr}`).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'Updated API Key Name', limit: 75 });
    }
    expect(await runCli(['keys', 'delete', HASH], { env: managed() })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const current = await runCli(['keys', 'current'], { env: managed() });
    expect(current.code, current.stderr).toBe(0);
    expect(current.stdout).toBe('sk-or-v1-au7...890\tkey\t100\t74.5\tmonthly\t25.5\t25.5\t25.5\t25.5\t2027-12-31T23:59:59Z\n');
    const mgmt = await runCli(['keys', 'current', '--management', '--json', 'is_management_key,rate_limit'], { env: managed() });
    expect(mgmt.code, mgmt.stderr).toBe(0);
    expect(JSON.parse(mgmt.stdout)).toMatchObject({ is_management_key: false });
  });

  it('usage --activity sums the example row (a day of 2025: --since reaches it, the last 30 days do not)', async () => {
    const old = await runCli(['usage', '--activity', '--by', 'model', '--since', '2025-08-01', '--key', HASH], { env: managed() });
    expect(old.stderr).toBe('');
    expect(old.stdout).toBe('openai/gpt-4.1\t5\t50\t125\t175\t0.015000\ntotal\t5\t50\t125\t175\t0.015000\n');
    expect(old.code).toBe(0);
    const recent = await runCli(['usage', '--activity', '--json'], { env: managed() });
    expect(recent.code, recent.stderr).toBe(0);
    expect(JSON.parse(recent.stdout)).toMatchObject({ rows: [], total: { calls: 0 } });
  });

  it("the OpenAPI's error examples are one line each with the documented exit code", async () => {
    // 400 → 2, 401 → 3 (said as the management key), 404 → 5, 500 → 7; 429 → 6.
    const cases: [number, string[], number, RegExp][] = [
      [400, ['keys', 'create', 'x'], 2, /^error: POST \/api\/v1\/keys: 400 Bad Request: Invalid request parameters\n$/],
      [401, ['keys', 'list'], 3, /^error: listing keys needs a management key \(the management key is not valid\)/],
      [403, ['usage', '--activity'], 3, /^error: usage --activity needs a management key \(the management key was refused\)/],
      [404, ['keys', 'get', HASH], 5, /^error: GET \/api\/v1\/keys\/f01d[0-9a-f]+: 404 Not Found: Resource not found\n$/],
      [429, ['keys', 'update', HASH, '--name', 'n'], 6, /^error: PATCH \/api\/v1\/keys\/f01d[0-9a-f]+: 429 Too Many Requests: Rate limit exceeded/],
      [500, ['keys', 'delete', HASH], 7, /^error: DELETE \/api\/v1\/keys\/f01d[0-9a-f]+: 500 Internal Server Error: Internal Server Error\n$/],
      [500, ['usage', '--activity'], 7, /^error: GET \/api\/v1\/activity: 500 Internal Server Error: Internal Server Error/],
    ];
    try {
      for (const [status, args, code, said] of cases) {
        preferCode = status;
        const r = await runCli([...args, '--max-retries', '0'], { env: managed() });
        expect(r.stderr, `${status} ${args.join(' ')}`).toMatch(said);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.code, `${status} ${args.join(' ')}`).toBe(code);
        expect(r.stdout).toBe('');
      }
    } finally {
      preferCode = undefined;
    }
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


describe('the library client (src/client) against Prism: every route the OpenAPI has and the client asks', () => {
  const HASH = 'f01d52606dc8f0a8303a7b5cc3fa07109c2e346cec7c0a16b40de462992ce943';
  const GEN = 'gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG';
  let c: RouterClient;
  let m: RouterClient;
  beforeAll(() => {
    c = new RouterClient({ apiRoot: env.ROUTER_API_ROOT!, apiKey: 'sk-prism-test-0123456789', maxRetries: 0 });
    m = new RouterClient({ apiRoot: env.ROUTER_API_ROOT!, apiKey: 'sk-prism-management-0123456789', maxRetries: 0 });
  });
  afterAll(async () => {
    await c?.close();
    await m?.close();
  });
  const ask = [{ role: 'user' as const, content: 'hi' }];
  // Each call the client makes of a route the OpenAPI describes; the answer read as the client reads it.
  const calls = (): [string, () => Promise<unknown>][] => [
    ['chat.create', async () => (await c.chat.create({ model: 'openai/gpt-4', messages: ask })).choices.length],
    ['chat.create with tools', async () => (await c.chat.create({ model: 'openai/gpt-4', messages: ask, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] })).choices.length],
    ['embeddings.create', async () => (await c.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hi' })).data.length],
    ['speech.create', async () => {
      const s = await c.speech.create({ model: 'openai/gpt-4o-mini-tts', voice: 'alloy', input: 'hi' });
      let n = 0;
      for await (const b of s.chunks) n += b.length;
      return n;
    }],
    ['key.get', async () => typeof (await c.key.get()).limit_remaining],
    ['keys.list', async () => (await m.keys.list({ includeDisabled: true })).length],
    ['keys.create', async () => (await m.keys.create({ name: 'x', limit: 5 })).key.length],
    ['keys.get', async () => (await m.keys.get(HASH)).hash.length],
    ['keys.update', async () => (await m.keys.update(HASH, { name: 'y' })).hash.length],
    ['keys.delete', () => m.keys.delete(HASH)],
    ['keys.current', async () => typeof (await m.keys.current()).is_management_key],
    ['activity.list', async () => (await m.activity.list()).length],
    ['credits.get', async () => typeof (await m.credits.get()).total_credits],
    ['generations.get', async () => typeof (await c.generations.get(GEN)).total_cost],
    ['generations.content', async () => typeof (await c.generations.content(GEN)).input],
    ['generations.feedback', () => m.generations.feedback({ generation_id: GEN, category: 'latency', comment: 'slow' })],
  ];

  it("parses each route's example answer (and Responses' and the model list's)", async () => {
    const failed: string[] = [];
    const all: [string, () => Promise<unknown>][] = [...calls(), ['responses.create', async () => (await c.responses.create({ model: 'openai/gpt-4', input: 'hi' })).status], ['models.list', async () => (await c.models.list()).length]];
    for (const [name, call] of all) await call().catch((e: unknown) => failed.push(`${name}: ${String(e)}`));
    expect(failed).toEqual([]);
  });

  it('parses answers Prism makes up from the schemas, five rounds', async () => {
    // Responses left out: Prism's faker itself fails on its schema now and then (a 500 from Prism), and the model
    // list's made-up links.next is a random word the client follows as a path (a 404).
    const failed: string[] = [];
    preferDynamic = true;
    try {
      for (let round = 0; round < 5; round++) for (const [name, call] of calls()) await call().catch((e: unknown) => failed.push(`${name}: ${String(e)}`));
      // Made up indeed: not the example's 100.5.
      expect((await m.credits.get()).total_credits).not.toBe(100.5);
    } finally {
      preferDynamic = false;
    }
    expect(failed).toEqual([]);
  });

  it("the OpenAPI's error answers are the client's typed errors by status", async () => {
    const { APIError } = await import('../../src/client/index.js');
    const seen: string[] = [];
    try {
      for (const code of [400, 401, 402, 403, 404, 429, 500, 502, 503]) {
        preferCode = code;
        const err = await c.chat.create({ model: 'openai/gpt-4', messages: ask }).then(() => undefined, (e: unknown) => e);
        seen.push(`${code} ${err instanceof APIError ? `${err.constructor.name} ${err.status}` : String(err)}`);
      }
    } finally {
      preferCode = undefined;
    }
    expect(seen).toEqual(['400 BadRequestError 400', '401 AuthenticationError 401', '402 PaymentRequiredError 402', '403 PermissionDeniedError 403', '404 NotFoundError 404', '429 RateLimitError 429', '500 InternalServerError 500', '502 InternalServerError 502', '503 InternalServerError 503']);
  });
});

/** router's commands against Prism serving the official OpenAPI: chat, responses, embed, every option of them and speak, models, credits, generation, keys and usage --activity, error examples. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { prismApiForFile } from '../support/prism-api.js';

// router against a service we did not write: Stoplight Prism serving the official OpenAPI of the
// deployed service, which answers each route with the OpenAPI's own example and refuses (422) a
// request the OpenAPI does not allow. Prism serves the paths at its root; the small proxy here puts
// them under /api/v1, where the deployed service has them.
const prismApi = prismApiForFile();
let env: Record<string, string>;
let home: string;
beforeAll(() => ({ env, home } = prismApi));

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
        prismApi.preferCode = status;
        const r = await runCli([...args, '--max-retries', '0'], { env: managed() });
        expect(r.stderr, `${status} ${args.join(' ')}`).toMatch(said);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.code, `${status} ${args.join(' ')}`).toBe(code);
        expect(r.stdout).toBe('');
      }
    } finally {
      prismApi.preferCode = undefined;
    }
  });
});

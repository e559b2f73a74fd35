import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-env.js';
import { localService, type LocalUpstream } from '../support/upstreams.js';

// `router api` prints an error's body and, with -i, the answer's headers as they came: a server that
// echoes the key it was sent (a refusal's message, a WWW-Authenticate header) must not have it printed.
const KEY = 'sk-or-v1-echoed-0123456789abcdef0123456789';
const BINARY = Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x2a, 0x2a, 0x2a, 0x2a, 0x80, 0x0a]);
let service: LocalUpstream;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-api-echo-'));
  service = await localService((req, res) => {
    const key = String(req.headers.authorization).slice('Bearer '.length);
    // 2xx answers that echo it: JSON (a key's label), plain text, and a binary body (without the key: passed through).
    if (req.url?.includes('/echo-json')) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'a', label: `made with ${key}` }], has_more: false, last_id: 'a' }));
    if (req.url?.includes('/echo-text')) return res.writeHead(200, { 'content-type': 'text/plain' }).end(`your key: ${key}\n`);
    // Text in Latin-1 (not UTF-8: "clé"): the key is found as bytes all the same.
    if (req.url?.includes('/latin1')) return res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' }).end(Buffer.concat([Buffer.from([0x63, 0x6c, 0xe9, 0x3a, 0x20]), Buffer.from(key), Buffer.from('\n')]));
    if (req.url?.includes('/binary')) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(BINARY);
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer error="invalid_token", key="${key}"` });
    res.end(JSON.stringify({ error: { code: 401, message: `Invalid key: ${key}` } }));
  });
});
afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

it.each([[[]], [['-i']]])('router api %j: the echoed key is hidden on stdout and stderr alike, the refusal still shown', async (flags) => {
  // runCliInProcess itself fails a run whose output holds the key: before, the body went to stdout as it came.
  const r = await runCliInProcess(['api', ...flags, 'GET', '/v1/key'], { env: { ROUTER_API_ROOT: service.baseUrl.replace(/\/v1$/, '/api'), ROUTER_API_KEY: KEY, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state') } });
  expect(r.code).toBe(3);
  expect(r.stdout).toContain('"message":"Invalid key: ****"');
  if (flags.length) expect(r.stdout).toContain('www-authenticate: Bearer error="invalid_token", key="****"');
  expect(r.stderr).toMatch(/^error: GET \/api\/v1\/key: 401 Unauthorized: Invalid key: \*\*\*\*/);
});

const envOf = () => ({ ROUTER_API_ROOT: service.baseUrl.replace(/\/v1$/, '/api'), ROUTER_API_KEY: KEY, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state') });

// Before, a 2xx body was printed as it came: only the error path hid the key.
it.each([
  [['/v1/echo-json'], '"label":"made with ****"'],
  [['-i', '/v1/echo-json'], '"label":"made with ****"'],
  [['--paginate', '/v1/echo-json'], '"label":"made with ****"'],
  [['--jq', '.data[0].label', '/v1/echo-json'], 'made with ****\n'],
  [['/v1/echo-text'], 'your key: ****\n'],
])('router api %j answered 2xx with the key in its body: hidden', async (args, shown) => {
  // runCliInProcess itself fails a run whose output holds the key.
  const r = await runCliInProcess(['api', ...args], { env: envOf() });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(shown);
});

it('router api: a binary 2xx body (not UTF-8 text) is printed byte for byte', async () => {
  const r = await runCliInProcess(['api', '/v1/binary'], { env: envOf() });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdoutBytes.equals(BINARY)).toBe(true);
});

it('router api: a 2xx body not UTF-8 (Latin-1 text) that echoes the key has it hidden, the rest as it came', async () => {
  // Before: not UTF-8, it was printed as it came, the key with it (runCliInProcess fails a run that prints it).
  const r = await runCliInProcess(['api', '/v1/latin1'], { env: envOf() });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdoutBytes.equals(Buffer.from([0x63, 0x6c, 0xe9, 0x3a, 0x20, ...Buffer.from('****\n')]))).toBe(true);
});

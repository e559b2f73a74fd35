import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { hideSecrets } from '../../src/internal/hide-secrets.js';
import { runInProcess } from '../support/inprocess.js';

// A server (a proxy, a broken upstream) that echoes the key in an answer that is no JSON: the error quotes the
// answer's first 80 characters, which cut the key short, so the whole-key hiding left its first 34 characters shown.
const KEY = 'sk-rt-v1-0123456789abcdef0123456789abcdef0123456789abcdef';
let server: Server;
let apiRoot: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`data: {"error":{"code":500,"message":"bad key ${String(req.headers.authorization).slice('Bearer '.length)}"}}\n\n`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  apiRoot = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(() => new Promise((done) => server.close(done)));

it('a key cut short in a quoted answer is hidden, by the library and by the CLI', async () => {
  const client = new RouterClient({ apiKey: KEY, apiRoot, maxRetries: 0 });
  const said = await client.models.list().then(() => '', (err: Error) => err.message);
  await client.close();
  expect(said).toMatch(/^server sent malformed JSON \(\d+ bytes\): data: .*bad key \*\*\*\*/);
  // Old code: "…bad key sk-rt-v1-0123456789abcdef0123456789a".
  expect(said).not.toContain(KEY.slice(0, 16));
  const r = await runInProcess(['models'], { env: { ROUTER_API_KEY: KEY, ROUTER_API_ROOT: apiRoot, ROUTER_MAX_RETRIES: '0' } });
  expect(r.code).toBe(7);
  expect(r.stderr).toContain('bad key ****');
  expect(r.stderr).not.toContain(KEY.slice(0, 16));
});

it('hideSecrets: whole keys, and the start a cut left of a long one', () => {
  expect(hideSecrets(`a ${KEY} b ${KEY.slice(0, 30)}`, [KEY])).toBe('a **** b ****');
  // A short start (a service's own label, "sk-rt-v1-012...cdef") is not the key's.
  expect(hideSecrets(`${KEY.slice(0, 12)}...cdef`, [KEY])).toBe(`${KEY.slice(0, 12)}...cdef`);
});

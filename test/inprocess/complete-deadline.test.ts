import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { SETTLE } from '../support/until.js';

// Tab in a shell waits on `router __complete KIND`: a service that answers and then sends its body a
// byte at a time (never idle long enough for a read timeout) must not hold the shell for ever.
let t: CliEnv;
let trickle: Server;
let root: string;
const open = new Set<ServerResponse>();
const asked: string[] = [];

beforeAll(async () => {
  t = await startCliEnv();
  trickle = createServer((req, res) => {
    asked.push(req.url!.replace(/\?.*/, ''));
    open.add(res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data":[');
    const drip = setInterval(() => res.write(' '), 50);
    res.on('close', () => {
      clearInterval(drip);
      open.delete(res);
    });
  });
  await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
  root = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/api`;
});
afterAll(async () => {
  for (const res of open) res.destroy();
  await new Promise((resolve) => trickle.close(resolve));
  await t.close();
});

it('a completion gives up on a body that trickles in: nothing offered, nothing said, the shell back', async () => {
  const env = { ROUTER_API_ROOT: root, ROUTER_MANAGEMENT_KEY: 'sk-rt-mgmt-trickle-0000' };
  const got = await Promise.all(['key-hashes', 'batch-ids', 'models'].map((kind) => t.run(['__complete', kind], { env })));
  for (const g of got) expect(g).toMatchObject({ code: 0, stdout: '', stderr: '' });
  // Each was asked, and its answer abandoned (the connection closed by the client).
  expect(asked.sort()).toEqual(['/api/v1/batches', '/api/v1/keys', '/api/v1/models']);
  await vi.waitFor(() => expect(open.size).toBe(0), SETTLE);
});

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// Credentials a caller sends in headers other than Authorization (a client of another API's habits,
// a proxy, a browser's cookies) are not the emulator's to show: the request log (`GET
// /_emulator/requests`, read by the workspace's and the operator's management keys) and a cassette's
// headers follow one list of secret header names.
const SECRETS: Record<string, string> = {
  authorization: 'Bearer X',
  'x-api-key': 'sk-ant-secret-one',
  'api-key': 'azure-secret-two',
  'x-goog-api-key': 'goog-secret-three',
  cookie: 'session=cookie-secret-four',
  'proxy-authorization': 'Basic cHJveHktc2VjcmV0LWZpdmU=',
  'x-auth-token': 'auth-secret-six',
};
let dir: string;
let gateway: Emulator;
let upstream: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-log-secrets-'));
  upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'upstream=cookie-secret-seven', 'x-upstream-credential': 'cred-secret-eight', 'x-request-id': 'up-1' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m } }\n`, {});
  gateway = await startEmulator({ stateDir: join(dir, 'state'), port: 0, gateway: { config, cassettes: { dir: join(dir, 'tapes'), mode: 'record' } } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('headers that carry credentials', () => {
  it('are not in the request log, whichever key reads it; the others are', async () => {
    const { apiKey, managementKey } = gateway.store.firstKeys();
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...SECRETS, authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-title': 'my app' },
      body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const log = await fetch(`${gateway.apiRoot}/_emulator/requests`, { headers: { authorization: `Bearer ${managementKey}` } });
    expect(log.status).toBe(200);
    const text = await log.text();
    const entry = (JSON.parse(text) as { data: { path: string; headers: Record<string, string> }[] }).data.find((e) => e.path === '/v1/chat/completions')!;
    expect(entry.headers['x-title']).toBe('my app');
    expect(entry.headers['content-type']).toBe('application/json');
    for (const name of Object.keys(SECRETS)) expect(entry.headers, name).not.toHaveProperty(name);
    for (const value of [apiKey, ...Object.values(SECRETS).slice(1)]) expect(text).not.toContain(value);
    // The same list in memory: the emulator's own view of the log.
    expect(JSON.stringify(gateway.requestLog)).not.toMatch(/secret|cHJveHkt/);
  });

  it("are not in a cassette's recorded answer; the others are", async () => {
    // A cassette is written after its answer is delivered (to a temp file, then renamed): wait for it.
    const files = await vi.waitFor(() => {
      const done = readdirSync(join(dir, 'tapes')).filter((f) => f.endsWith('.json'));
      expect(done).toHaveLength(1);
      return done;
    }, SETTLE);
    const tape = readFileSync(join(dir, 'tapes', files[0]!), 'utf8');
    expect(tape).toContain('up-1');
    expect(tape).not.toMatch(/secret|set-cookie|x-upstream-credential/);
  });
});

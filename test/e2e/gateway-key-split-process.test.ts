import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { killedServe, spawnServe, type Serve } from '../support/serve-process.js';

// The real binary: `router serve --providers FILE --record DIR` relaying an upstream that streams its own
// key split between two events. The openai SDK joins the deltas; neither it nor the cassette gets the key.
const KEY = 'sk-provider-secret-0123456789abcdef';
const chunk = (content: string, finish: string | null = null) => `data: ${JSON.stringify({ id: 'gen-h', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

let dir: string;
let upstream: LocalUpstream;
let gateway: Serve;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-key-split-process-'));
  upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const events = [chunk('Hi, mine is sk-provider-se'), chunk('cret-0123456789abcdef. Bye'), chunk('', 'stop'), 'data: [DONE]\n\n'];
    const next = () => (events.length ? res.write(events.shift()!, () => setTimeout(next, 2)) : res.end());
    next();
  });
  writeFileSync(join(dir, 'providers.yaml'), `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", api_key_env: UP_KEY, models: { test/m: m } }\n`);
  gateway = await spawnServe(['--state', join(dir, 'state'), '--providers', join(dir, 'providers.yaml'), '--record', join(dir, 'tapes')], { UP_KEY: KEY, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xstate'), XDG_CACHE_HOME: join(dir, 'cache') });
});

afterAll(async () => {
  if (gateway) await killedServe(gateway);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a key an upstream splits between two stream events reaches neither the caller nor the cassette', async () => {
  const client = new OpenAI({ apiKey: gateway.info.api_key, baseURL: `${gateway.info.api_root}/v1`, maxRetries: 0, timeout: 20_000 });
  let text = '';
  for await (const part of await client.chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'your key?' }] })) text += part.choices[0]?.delta?.content ?? '';
  expect(text).toBe('Hi, mine is [provider key]. Bye');
  gateway.child.kill('SIGTERM');
  await gateway.exited;
  const tapes = readdirSync(join(dir, 'tapes'));
  expect(tapes).toHaveLength(1);
  const tape = JSON.parse(readFileSync(join(dir, 'tapes', tapes[0]!), 'utf8')) as { response: { chunks: { data: { choices?: { delta?: { content?: string } }[] } }[] } };
  expect(tape.response.chunks.map((c) => c.data?.choices?.[0]?.delta?.content ?? '').join('')).toBe('Hi, mine is [provider key]. Bye');
});

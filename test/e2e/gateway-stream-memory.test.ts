import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { serveApi, spawnServe, type Serve } from '../support/serve-process.js';

// A gateway gathers a relayed stream's text for GET /v1/generation/content. What it gathers must be
// the text itself: a piece of content sliced from an upstream event keeps the whole network read it
// came in alive (V8's sliced strings), so a stream of large events held all of them, ~the raw stream,
// for as long as it lasted.
const EVENTS = 3000;
const PAD = 'x'.repeat(32 * 1024);
let dir: string;
let upstream: LocalUpstream;
let gateway: Serve;
let release: () => void;
const held = new Promise<void>((r) => (release = r));

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) =>
  `data: ${JSON.stringify({ id: 'gen-up-big', object: 'chat.completion.chunk', created: 1, model: 'm', pad: PAD, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
const word = (i: number) => `word number ${String(i).padStart(8, '0')} `;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-stream-memory-'));
  // Events of 32 KB, each in a write of its own, a turn of the loop apart: one network read each. The
  // final event waits until the test has measured.
  upstream = await localUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < EVENTS; i++) {
      if (!res.write(chunk({ content: word(i) }))) await new Promise((r) => res.once('drain', r));
      await new Promise((r) => setImmediate(r));
    }
    await held;
    res.end(`${chunk({}, 'stop', { prompt_tokens: 1, completion_tokens: EVENTS, total_tokens: EVENTS + 1 })}data: [DONE]\n\n`);
  });
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/big: m }, prices: { test/big: { prompt: 0.000001, completion: 0.000001 } } }\n`);
  gateway = await spawnServe(['--state', join(dir, 'state'), '--providers', providers]);
});

afterAll(async () => {
  release();
  gateway?.child.kill('SIGKILL');
  await gateway?.exited;
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a relayed stream of large events holds its text while it lasts, not every network read it came in (96 MB here)', async () => {
  const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8'))![1]) / 1024;
  const before = rssMiB();
  const res = await fetch(`${gateway.info.api_root}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.info.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'test/big', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = 0;
  let tail = '';
  let id = '';
  // Every event relayed: the gateway has read them all and holds whatever it keeps of them.
  while (seen < EVENTS) {
    const { value, done } = await reader.read();
    if (done) break;
    const read = tail + decoder.decode(value, { stream: true });
    // The gateway's id for the stream (not the upstream's), in its first chunk.
    id ||= /"id":"(gen-\d+-[0-9a-f]+)"/.exec(read)?.[1] ?? '';
    const parts = read.split('word number');
    seen += parts.length - 1;
    tail = parts.at(-1)!.slice(-16);
  }
  expect(seen).toBe(EVENTS);
  // Measured: 132 MB with the slices kept (the 96 MB of reads, promoted); 20 MB with copies (the young generation).
  expect(rssMiB() - before).toBeLessThan(64);
  release();
  while (!(await reader.read()).done);
  // The text gathered is still the stream's, whole.
  const content = await serveApi(gateway, `/v1/generation/content?id=${id}`, undefined, gateway.info.management_key);
  expect(content.status).toBe(200);
  expect(content.json.data.output.completion).toBe(Array.from({ length: EVENTS }, (_, i) => word(i)).join(''));
});

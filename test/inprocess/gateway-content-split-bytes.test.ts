import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// A relayed stream's text is gathered in one UTF-16 buffer (routing/transcript.ts, ec8252a) for
// GET /v1/generation/content. Over real HTTP, from an upstream that writes one byte at a time: every
// UTF-8 character split across network reads, a surrogate pair split across two events, reasoning
// sent as reasoning_content (renamed, 3d95154). The caller and the kept content see the same text.

let dir: string;
let gateway: Emulator;
let server: Server;
let frames: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-split-bytes-'));
  server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const bytes = Buffer.from(frames.map((f) => `data: ${f}\n\n`).join('') + 'data: [DONE]\n\n');
      // one byte a write: every multi-byte character split
      for (const b of bytes) {
        res.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const yaml = `providers:\n  - { name: bytes, base_url: "http://127.0.0.1:${port}/v1", models: { test/bytes: m } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, {}) } });
});
afterAll(async () => {
  await gateway?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => JSON.stringify({ id: 'gen-up-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });

it('keeps unicode split across network reads, reasoning_content as reasoning', async () => {
  frames = [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'thé 😀 ' }), chunk({ reasoning_content: '中文' }), chunk({ content: 'é😀' }), chunk({ content: '中' }), chunk({ content: '\ud83d' }), chunk({ content: '\ude00 done' }), chunk({}, 'stop')];
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/bytes', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
  const raw = await res.text();
  const chunks = raw.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
  const text = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
  expect(text).toBe('é😀中😀 done');
  const got = await (await fetch(`${gateway.apiRoot}/v1/generation/content?id=${chunks[0].id}`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}` } })).json() as any;
  expect(got.data.output).toEqual({ completion: 'é😀中😀 done', reasoning: 'thé 😀 中文' });
});

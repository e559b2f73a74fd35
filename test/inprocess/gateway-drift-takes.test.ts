import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { checkDriftAll } from '../../src/emulator/providers/drift.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// A recorded retry (a stream that broke, then the retry's whole stream: two takes of one request) is
// one request to --check-drift: its last take, which replay answers from then on, is asked again and
// compared. Before, each take was sent again (the upstream asked, and paid, twice) and the broken
// take, compared with a whole answer, was reported as drift: exit 1 for an upstream that had not changed.
let dir: string;
let upstream: LocalUpstream;
let asked = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-drift-takes-'));
  upstream = await localUpstream((_req, res) => {
    asked++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk('Hello')}${sseChunk(' there', 'stop')}data: [DONE]\n\n`);
  });
});

afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chunk = (content: string, finish: string | null = null) => JSON.parse(sseChunk(content, finish).slice(6)) as unknown;

it('checks the last take of a recorded retry once, and finds it the same', async () => {
  const folder = join(dir, 'cassettes');
  mkdirSync(folder);
  const request = { method: 'POST', url: `${upstream.baseUrl}/chat/completions`, headers: { 'content-type': 'application/json' }, body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] } };
  const base = { provider: 'up', recorded_at: '2026-11-28T00:00:00.000Z', request };
  const head = { status: 200, headers: { 'content-type': 'text/event-stream' } };
  writeFileSync(join(folder, 'up-m-0123456789ab.json'), JSON.stringify({ ...base, response: { ...head, chunks: [{ after_ms: 1, data: chunk('Hello') }], broken: 'up: stream broken (ECONNRESET)' } }));
  writeFileSync(join(folder, 'up-m-0123456789ab-2.json'), JSON.stringify({ ...base, take: 2, response: { ...head, chunks: [{ after_ms: 1, data: chunk('Hello') }, { after_ms: 2, data: chunk(' there', 'stop') }, { after_ms: 3, data: '[DONE]' }] } }));
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { t/m: m } }\n`, {});
  const reports = await checkDriftAll(folder, config, () => {});
  expect(reports).toEqual([{ file: 'up-m-0123456789ab-2.json', changes: [] }]);
  expect(asked).toBe(1);
});

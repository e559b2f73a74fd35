import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// `--record-missing` asks again for a request whose only take is a refusal it kept, the answer taking
// the refusal's take. Two identical requests at once: the second came while the first's answer still
// streamed (its cassette not yet written) and took the same gap, the same take, the same file: one
// cassette written twice, the first exchange lost. Now each exchange of a run has its own take.
let dir: string;
let up: LocalUpstream;
let refusals = 1;
const streams: ServerResponse[] = [];
let arrived: (() => void) | undefined;
const BODY = { model: 't/m', stream: true, messages: [{ role: 'user', content: 'let me in' }] };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-record-missing-twice-'));
  // Refuses the key the first time; then starts each stream and holds it until the test ends it.
  up = await localUpstream((_req, res) => {
    if (refusals-- > 0) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk(`answer ${streams.length + 1}`));
    streams.push(res);
    arrived?.();
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cassettes = () => join(dir, 'cassettes');
const files = () => readdirSync(cassettes()).filter((f) => f.endsWith('.json')).sort();
const takes = () => files().map((f) => JSON.parse(readFileSync(join(cassettes(), f), 'utf8')) as Cassette).sort((a, b) => (a.take ?? 1) - (b.take ?? 1));

async function run<T>(name: string, use: (e: Emulator) => Promise<T>): Promise<T> {
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${up.baseUrl}", api_key_env: UP_KEY, models: { t/m: m } }\n`, { UP_KEY: 'a-key-of-the-gateway' });
  const e = await startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config, cassettes: { dir: cassettes(), mode: 'replay-record', timing: 0 } } });
  try {
    return await use(e);
  } finally {
    await e.close();
  }
}

const ask = (e: Emulator) => fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
const streamArrives = () => new Promise<void>((resolve) => (arrived = resolve));

describe('two identical requests at once under --record-missing, a kept refusal their only take', () => {
  it('keeps each exchange in a cassette of its own', async () => {
    expect((await run('first', ask)).status).toBe(502);
    expect(takes().map((c) => [c.take ?? 1, c.response.status, c.record_missing])).toEqual([[1, 401, true]]);

    await run('second', async (e) => {
      // The first answer streams (its cassette still to write) when the second request comes.
      let came = streamArrives();
      const first = await ask(e);
      await came;
      came = streamArrives();
      const second = await ask(e);
      await came;
      for (const res of streams) res.end('data: [DONE]\n\n');
      const texts = await Promise.all([first.text(), second.text()]);
      expect(texts.map((t) => /answer \d/.exec(t)?.[0])).toEqual(['answer 1', 'answer 2']);
    });
    // Both answers kept, each once; the refusal's take filled by the first.
    const kept = takes().map((c) => [c.take ?? 1, c.response.status, (c.response.chunks as { data: { choices?: { delta: { content: string } }[] } }[])?.[0]?.data.choices?.[0]?.delta.content]);
    expect(kept).toEqual([[1, 200, 'answer 1'], [2, 200, 'answer 2']]);
    expect(files()).toHaveLength(2);
  });
});

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A gateway stopped while it replays a Responses stream (its next event recorded an hour later): the
// stream ends with `response.failed` saying the gateway is stopping, as a live one's, never a bare cut.
let dir: string;
let up: LocalUpstream;
const HOUR = 3_600_000;
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", responses: true, models: { test/m: m } }\n`, {});
const BODY = { model: 'test/m', stream: true, input: 'a stream' };
const ask = (e: Emulator) => fetch(`${e.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
const event = (type: string, n: number, extra: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, ...extra })}\n\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-stop-responses-'));
  const response = { id: 'resp_1', object: 'response', created_at: 1, model: 'm', status: 'in_progress', output: [] };
  up = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(
      event('response.created', 0, { response }) +
        event('response.output_text.delta', 1, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello' }) +
        event('response.output_text.delta', 2, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: ' world' }) +
        event('response.completed', 3, { response: { ...response, status: 'completed', usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } }),
    );
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a gateway stopped while it replays a Responses stream', () => {
  it('ends it with response.failed (the gateway is stopping), as a live one', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    try {
      expect(await (await ask(recorder)).text()).toContain('response.completed');
    } finally {
      await recorder.close();
    }
    const [file] = readdirSync(cassettes);
    const c = JSON.parse(readFileSync(join(cassettes, file!), 'utf8')) as Cassette;
    c.response.chunks!.forEach((chunk, i) => (chunk.after_ms = i < 2 ? 0 : HOUR));
    writeFileSync(join(cassettes, file!), JSON.stringify(c, null, 2));
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(`http://127.0.0.1:${await deadPort()}/v1`), cassettes: { dir: cassettes, mode: 'replay' } } });
    const res = await ask(player);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
    const stopped = player.close();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    await stopped;
    const events = text.split('\n\n').filter((e) => e.includes('data: '));
    const last = JSON.parse(events.at(-1)!.split('data: ')[1]!);
    expect(last.type).toBe('response.failed');
    expect(last.response.error.message).toContain('up: the gateway is stopping');
    expect(text).not.toContain('world');
  });
});

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fullDiskPerFile, mounted } from '../support/full-disk.js';
import { waitBound } from '../support/until.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// A gateway's stream that ends while its state's disk is full is answered and charged (its charge saved once
// there is room); its generation, which the disk refused, is written once there is room too, so the
// caller's `GET /v1/generation` (and `router usage --reconcile`) finds the charged request after a restart.
// Before: kept in memory only for good: a stop with room again, then a start, answered 404 for it.
const { disk, fill } = fullDiskPerFile();
let upstream: LocalUpstream;
let release: () => void = () => {};

beforeAll(async () => {
  upstream = await localUpstream((_req, res) => {
    const base = { id: 'gen-up', created: 1, model: 'm', object: 'chat.completion.chunk' };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    chunk({ role: 'assistant', content: 'first ' });
    // The rest waits for the test to fill the disk.
    new Promise<void>((resolve) => (release = resolve)).then(() => {
      chunk({ content: 'second' }, 'stop');
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
});
// Closed after each test, before the disk is unmounted: a gateway a failed test left open kept it busy.
let open: Emulator | undefined;
afterEach(async () => {
  release();
  await open?.close();
  open = undefined;
});
afterAll(() => upstream?.close());

const start = (): Promise<Emulator> => {
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { t/m: m }, prices: { t/m: { prompt: 0.001, completion: 0.01 } } }\n`;
  return startEmulator({ stateDir: join(disk, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, {}) } }).then((g) => (open = g));
};

describe.skipIf(!mounted)('a gateway stream that ends on a full disk', () => {
  // Records gather 20 ms before their write (state/generation-file.ts): on a full disk the file may not be made yet.
  const generationsText = () => (existsSync(join(disk, 'gateway', 'generations.jsonl')) ? readFileSync(join(disk, 'gateway', 'generations.jsonl'), 'utf8') : '');
  it('is charged, and its generation is on disk once there is room: found after a restart', async () => {
    rmSync(join(disk, 'filler'), { force: true });
    let gateway = await start();
    const { apiKey, managementKey } = gateway.store.firstKeys();
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 't/m', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('first ')) text += new TextDecoder().decode((await reader.read()).value);
    fill();
    release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(text).toContain('"second"');
    expect(text).toContain('data: [DONE]');
    const id = /"id":"(gen-[^"]+)"/.exec(text)![1]!;
    const owed = 10 * 0.001 + 2 * 0.01;
    const credits = async (g: Emulator) =>
      (await (await fetch(`${g.apiRoot}/v1/credits`, { headers: { authorization: `Bearer ${managementKey}` } })).json()) as { data: { total_usage: number } };
    expect((await credits(gateway)).data.total_usage).toBeCloseTo(owed, 10);
    expect(generationsText()).not.toContain(id);
    rmSync(join(disk, 'filler'), { force: true });
    // Room again: once the state is saved (retried each second), the next answer's write takes it along.
    const ask = () =>
      fetch(`${gateway.apiRoot}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const onDisk = () => generationsText().includes(id);
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      const r = await ask();
      await r.text();
      if (r.status === 200 && onDisk()) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(onDisk()).toBe(true);
    await gateway.close();
    open = undefined;
    gateway = await start();
    try {
      expect((await credits(gateway)).data.total_usage).toBeGreaterThanOrEqual(owed);
      const got = await fetch(`${gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      const body = await got.text();
      expect(got.status, body).toBe(200);
      expect(JSON.parse(body).data).toMatchObject({ id, total_cost: owed, tokens_prompt: 10, tokens_completion: 2 });
    } finally {
      await gateway.close();
      open = undefined;
    }
  });
});

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from './upstreams.js';
import { SETTLE } from './until.js';

/** What the hostile upstream answers next: a JSON body (200 unless `status` says), or SSE events then `[DONE]`. */
export interface HostileAnswer {
  status?: number;
  body?: string;
  events?: string[];
}

type Body = Record<string, unknown>;
export const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-hostile', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
export const delta = (d: Body, finish: string | null = null) => ({ index: 0, delta: d, finish_reason: finish });
export const ev = (x: Body) => `event: ${String(x.type)}\ndata: ${JSON.stringify(x)}\n\n`;
export const textDelta = (d: string, n: number) => ev({ type: 'response.output_text.delta', sequence_number: n, item_id: 'm1', output_index: 0, content_index: 0, delta: d });

/**
 * A gateway (`router serve --providers --record`, in-process over real HTTP) in front of an upstream that
 * answers what the test set last, holding the provider key `key`; the caller is the openai SDK. Registers
 * the file's (or describe block's) beforeAll/afterAll.
 */
export function hostileGateway(key: string, options: Partial<EmulatorOptions> = {}) {
  let next: HostileAnswer = {};
  let dir = '';
  let upstream: LocalUpstream;
  let gateway: Emulator;
  const start = () => {
    const yaml = `providers:\n  - { name: up, responses: true, base_url: "${upstream.baseUrl}", api_key_env: UP_KEY, models: { test/m: m }, embedding_models: { test/e: e } }\n`;
    return startEmulator({ ...options, stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: key }), cassettes: { dir: join(dir, 'tapes'), mode: 'record' } } });
  };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'router-hostile-'));
    upstream = await localUpstream(async (_req, res) => {
      if (next.body !== undefined) {
        res.writeHead(next.status ?? 200, { 'content-type': 'application/json' });
        res.end(next.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const text of [...(next.events ?? []), 'data: [DONE]\n\n']) await new Promise<void>((resolve) => res.write(text, () => resolve()));
      res.end();
    });
    gateway = await start();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const raw = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  };
  return {
    willAnswer: (a: HostileAnswer) => void (next = a),
    client: () => new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 }),
    /** The gateway's answer to `method path` (the caller's key), as the bytes it sent, decoded. */
    raw,
    /** A one-request chat batch made at `path` (`batchesPathOf(flavor)`), read once settled: its bytes, decoded. */
    settledBatchText: async (path: string) => {
      const requests = [{ custom_id: 'r0', body: { messages: [{ role: 'user', content: 'hi' }] } }];
      const created = await raw('POST', path, { endpoint: '/v1/chat/completions', model: 'test/m', completion_window: '24h', requests });
      expect(created.status, created.text).toBeLessThan(300);
      const id = (JSON.parse(created.text) as { id: string }).id;
      return vi.waitFor(async () => {
        const seen = await raw('GET', `${path}/${id}`);
        expect(seen.text).toMatch(/"status":"(completed|failed)"/);
        return seen.text;
      }, SETTLE);
    },
    /** The gateway's request log, as its reader gets the bytes, decoded. */
    requestLog: async () => (await fetch(`${gateway.apiRoot}/_emulator/requests`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}` } })).text(),
    /** Every cassette the gateway wrote for the prompt `asked`, as text. */
    tapesOf: (asked: string) => readdirSync(join(dir, 'tapes')).map((f) => readFileSync(join(dir, 'tapes', f), 'utf8')).filter((t) => t.includes(asked)).join('\n'),
    /** The headers of the last request the upstream got. */
    lastSeen: () => upstream.seen.at(-1),
    /** Stops the gateway and starts it again on the same state (its cassettes written out). */
    restart: async () => {
      await gateway.close();
      gateway = await start();
    },
  };
}

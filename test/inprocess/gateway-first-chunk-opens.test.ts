import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// One rule for when a relayed stream opens to the caller: the chunk that stops first_event_timeout_ms's
// timer. An upstream here sends a first chunk with only a refusal, reasoning or audio, then waits
// until the test has read that chunk through the gateway before it sends the rest.
type Body = Record<string, unknown>;

/** The first delta the upstream sends for each of its model names. */
const FIRST: Record<string, Body> = {
  refusal: { role: 'assistant', content: null, refusal: "I can't help with that." },
  reasoning_content: { role: 'assistant', content: null, reasoning_content: 'Thinking it over.' },
  reasoning: { role: 'assistant', content: '', reasoning: 'Thinking it over.' },
  audio: { role: 'assistant', audio: { id: 'audio-1', data: 'UklGRg==', transcript: 'Hi' } },
};

let dir: string;
let upstream: Server;
let gateway: Emulator;
let client: OpenAI;
const open = new Set<ServerResponse>();
/** The rest of each waiting upstream stream, sent when the test calls it. */
const rest = new Map<string, () => void>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-first-chunk-'));
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    open.add(res);
    req.on('end', () => {
      const model = (JSON.parse(body) as { model: string }).model;
      const chunk = (delta: Body, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk(FIRST[model]!));
      rest.set(model, () => res.end(`${chunk({ content: 'Done.' })}${chunk({}, 'stop')}data: [DONE]\n\n`));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const models = Object.keys(FIRST)
    .map((name) => `test/${name}: ${name}`)
    .join(', ');
  // timeout_ms bounds the old behaviour (the relay held the stream until it) to a failure, not a hang.
  const yaml = `providers:\n  - { name: held, base_url: "${url}", api_key_env: UP, timeout_ms: 3000, first_event_timeout_ms: 2000, models: { ${models} } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP: 'upstream-key' }) } });
  client = new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });
});

afterAll(async () => {
  await gateway?.close();
  for (const res of open) res.destroy();
  await new Promise((r) => upstream?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a relayed stream opens to the caller at the first chunk with some of an answer', () => {
  for (const [name, delta] of Object.entries(FIRST)) {
    const field = Object.keys(delta).at(-1)!;
    it(`a first chunk with only ${field} reaches the caller before the upstream goes on`, async () => {
      // Before: the timer stopped at that chunk, but the relay held it for a token until timeout_ms
      // (3 s), and the caller got a 502 with nothing streamed.
      const stream = await client.chat.completions.create({ model: `test/${name}`, messages: [{ role: 'user', content: 'hi' }], stream: true });
      const it = stream[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.done).toBe(false);
      const got = first.value.choices[0]!.delta as unknown as Body;
      // reasoning_content reaches the caller under the service's name (serviceReasoning).
      expect(got[field === 'reasoning_content' ? 'reasoning' : field]).toEqual(delta[field]);
      expect(first.value.model).toBe(`test/${name}`);
      expect((first.value as unknown as Body).provider).toBe('held');
      rest.get(name)!();
      let text = '';
      let finish: string | null = null;
      for (let next = await it.next(); !next.done; next = await it.next()) {
        text += next.value.choices[0]?.delta.content ?? '';
        finish = next.value.choices[0]?.finish_reason ?? finish;
      }
      expect(text).toBe('Done.');
      expect(finish).toBe('stop');
    });
  }
});

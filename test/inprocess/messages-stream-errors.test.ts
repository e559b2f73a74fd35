import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { emulatorFolder } from '../support/emulator-folder.js';

// A `/v1/messages` stream broken after its first content ends with Anthropic's `error` event
// (`event: error`, `data: {"type":"error","error":{"type",…}}`), its type the one the whole answer of
// that cause would have: a provider's mid-stream 429 `rate_limit_error`, a stall past idle_timeout_ms
// `timeout_error`, any other break (a 502) `api_error`. `@anthropic-ai/sdk` throws it as an APIError
// with no status (the answer's status was 200) and that type. Before: always `api_error`; chat's error
// chunk said `provider_unavailable` for every cause.
const folder = emulatorFolder('router-messages-stream-errors-');
let upstream: Server;
let gateway: Emulator;

/** An OpenAI-compatible upstream that answers a first token, then breaks as its prompt says: a 429 error chunk, or silence. */
function breakingUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const chunk = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      chunk({ id: 'up-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'one ' }, finish_reason: null }] });
      if (body.includes('limit me')) res.end(`data: ${JSON.stringify({ error: { code: 429, message: 'Rate limit reached mid-way' } })}\n\n`);
      else if (body.includes('break me')) res.end(`data: ${JSON.stringify({ error: { code: 500, message: 'boom' } })}\n\n`);
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

beforeAll(async () => {
  upstream = await breakingUpstream();
  const yaml = `providers:\n  - { name: up, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", api_key_env: UP_KEY, idle_timeout_ms: 200, models: { test/m: m } }\n`;
  gateway = await folder.start('gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: 'k' }) } });
});

afterAll(async () => {
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

const ask = (content: string, model = 'test/m') => ({ model, max_tokens: 16, stream: true, messages: [{ role: 'user', content }] });

/** The stream's last frame: its event name and its data. */
async function lastFrame(path: string, body: unknown, fault?: string): Promise<{ event: string; data: any }> {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json', ...(fault ? { 'x-router-fault': fault } : {}) }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const frames = (await res.text()).split('\n\n').filter((f) => f && !f.startsWith(':') && f !== 'data: [DONE]');
  const last = frames.at(-1)!.split('\n');
  const event = last.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
  return { event, data: JSON.parse(last.find((l) => l.startsWith('data: '))!.slice(6)) };
}

describe('a /v1/messages stream broken after its first content', () => {
  it('ends with the error event of its cause, in Anthropic’s shape', async () => {
    const cases: [string, object, string, string][] = [
      ['limit me', ask('limit me'), 'rate_limit_error', 'rate_limit_exceeded'],
      ['stall', ask('stall'), 'timeout_error', 'timeout'],
      ['break me', ask('break me'), 'api_error', 'provider_unavailable'],
    ];
    for (const [name, body, type, cause] of cases) {
      const last = await lastFrame('/v1/messages', body);
      expect(last, name).toEqual({ event: 'error', data: { type: 'error', error: { type, message: expect.stringContaining('mid-stream'), error_type: cause } } });
    }
    // A fake model's cut (the error-chunk fault) is a 502: api_error, as its whole answer would be.
    const faulted = await lastFrame('/v1/messages', ask('hello there', 'local/echo'), 'error-chunk,after=2');
    expect(faulted.data.error).toMatchObject({ type: 'api_error', error_type: 'provider_unavailable' });
  });

  it('chat’s error chunk names the same cause', async () => {
    const last = await lastFrame('/v1/chat/completions', ask('limit me'));
    expect(last.data.error).toMatchObject({ code: 502, metadata: { error_type: 'rate_limit_exceeded' } });
  });

  it('@anthropic-ai/sdk throws it as an APIError of no status, its type the event’s', async () => {
    const client = new Anthropic({ apiKey: gateway.store.firstKeys().apiKey, baseURL: gateway.apiRoot, maxRetries: 0 });
    const thrown = await (async () => {
      const stream = await client.messages.create({ ...ask('limit me'), stream: true } as Anthropic.MessageCreateParamsStreaming);
      for await (const _event of stream);
    })().then(
      () => expect.fail('the stream ended cleanly'),
      (err: unknown) => err as InstanceType<typeof Anthropic.APIError>,
    );
    expect(thrown).toBeInstanceOf(Anthropic.APIError);
    expect(thrown).not.toBeInstanceOf(Anthropic.RateLimitError);
    expect([thrown.status, thrown.type, (thrown.error as { error: { type: string } }).error.type]).toEqual([undefined, 'rate_limit_error', 'rate_limit_error']);
  });
});

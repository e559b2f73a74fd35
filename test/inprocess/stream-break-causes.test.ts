import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { emulatorFolder } from '../support/emulator-folder.js';

// One upstream break, every stream shape the caller may ask in: chat's error chunk
// (`metadata.error_type`), /v1/messages' `error` event (its Anthropic type and `error_type`), and the
// Responses stream's `response.failed` (its code and `error_type`) say the same cause. The cause as
// real upstreams say it: Anthropic's error type, OpenAI's/Groq's string code, a status's digits,
// Google's status. Before: any cause said only in words was `provider_unavailable`, and the Responses
// relay said `server_error` with no cause at all.
const folder = emulatorFolder('router-stream-break-causes-');
let upstream: Server;
let gateway: Emulator;

interface Case {
  name: string;
  /** The break as a chat upstream sends it (a chunk's `error`). */
  chat: object;
  /** The break as a Responses upstream sends it (an `error` or `response.failed` event). */
  responses: object;
  cause: string;
  anthropic: string;
  responsesCode: string;
}

const CASES: Case[] = [
  { name: 'anthropic-overloaded', chat: { type: 'overloaded_error', message: 'Overloaded' }, responses: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, cause: 'provider_overloaded', anthropic: 'overloaded_error', responsesCode: 'server_error' },
  { name: 'groq-rate-limit', chat: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' }, responses: { type: 'error', code: 'rate_limit_exceeded', message: 'Rate limit reached', param: null }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'status-digits', chat: { message: 'Too many', code: '429' }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: '429', message: 'Too many' } } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'anthropic-timeout', chat: { type: 'timeout_error', message: 'Timed out' }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: 'timeout_error', message: 'Timed out' } } }, cause: 'timeout', anthropic: 'timeout_error', responsesCode: 'server_error' },
  { name: 'google-exhausted', chat: { code: 'x', message: 'Quota', status: 'RESOURCE_EXHAUSTED' }, responses: { type: 'error', error: { message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'openai-server-error', chat: { message: 'The server had an error', type: 'server_error', code: null }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'The server had an error' } } }, cause: 'provider_unavailable', anthropic: 'api_error', responsesCode: 'server_error' },
];

/** An upstream of chat and Responses streams: a first piece of text, then the break its prompt names. */
function breakingUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const at = CASES.find((c) => body.includes(c.name))!;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url?.endsWith('/responses')) {
        const event = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
        event({ type: 'response.created', sequence_number: 0, response: { id: 'resp_x', object: 'response', model: 'm', status: 'in_progress', output: [] } });
        event({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_x', output_index: 0, content_index: 0, delta: 'one ' });
        event({ ...at.responses, sequence_number: 2 });
        res.end();
        return;
      }
      res.write(`data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'one ' }, finish_reason: null }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ error: at.chat })}\n\n`);
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

beforeAll(async () => {
  upstream = await breakingUpstream();
  const root = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const yaml = `providers:\n  - { name: up, base_url: "${root}", api_key_env: UP_KEY, models: { test/m: m } }\n  - { name: resp, responses: true, base_url: "${root}", api_key_env: UP_KEY, models: { test/r: m } }\n`;
  gateway = await folder.start('gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: 'k' }) } });
});

afterAll(async () => {
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

/** The stream's last frame's data. */
async function lastData(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const frames = (await res.text()).split('\n\n').filter((f) => f && !f.startsWith(':') && f !== 'data: [DONE]');
  const last = frames.at(-1)!.split('\n');
  return JSON.parse(last.find((l) => l.startsWith('data: '))!.slice(6));
}

describe('an upstream’s break after its first content, in every stream shape', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: the same cause in chat, /v1/messages and Responses', async (name, c) => {
    const chat = await lastData('/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: name }] });
    expect(chat.error).toMatchObject({ code: 502, metadata: { error_type: c.cause } });
    const messages = await lastData('/v1/messages', { model: 'test/m', max_tokens: 16, stream: true, messages: [{ role: 'user', content: name }] });
    expect(messages).toEqual({ type: 'error', error: { type: c.anthropic, message: expect.stringContaining('mid-stream'), error_type: c.cause } });
    const responses = await lastData('/v1/responses', { model: 'test/r', stream: true, input: name });
    expect(responses.type).toBe('response.failed');
    expect(responses.response.error).toEqual({ code: c.responsesCode, message: expect.stringContaining('mid-stream'), error_type: c.cause });
  });
});

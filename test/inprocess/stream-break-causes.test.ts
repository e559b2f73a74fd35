import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { emulatorFolder } from '../support/emulator-folder.js';
import { breakingProviders, breakingUpstream, lastFrame, STREAM_CASES } from '../support/break-causes.js';
import type { LocalUpstream } from '../support/upstreams.js';

// One upstream break, every stream shape the caller may ask in: chat's error chunk
// (`metadata.error_type`), /v1/messages' `error` event (its Anthropic type and `error_type`), and the
// Responses stream's `response.failed` (its code and `error_type`) say the same cause. The cause as
// real upstreams say it: Anthropic's error type, OpenAI's/Groq's string code, a status's digits,
// Google's status. Before: any cause said only in words was `provider_unavailable`, and the Responses
// relay said `server_error` with no cause at all.
const folder = emulatorFolder('router-stream-break-causes-');
let upstream: LocalUpstream;
let gateway: Emulator;

beforeAll(async () => {
  upstream = await breakingUpstream();
  gateway = await folder.start('gateway', { gateway: { config: parseProviders(breakingProviders(upstream.baseUrl), { UP_KEY: 'k' }) } });
});

afterAll(() => upstream?.close());

/** The stream's last frame's data. */
async function lastData(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return lastFrame(await res.text());
}

describe('an upstream’s break after its first content, in every stream shape', () => {
  it.each(STREAM_CASES.map((c) => [c.name, c] as const))('%s: the same cause in chat, /v1/messages and Responses', async (name, c) => {
    const chat = await lastData('/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: name }] });
    expect(chat.error).toMatchObject({ code: 502, metadata: { error_type: c.cause } });
    const messages = await lastData('/v1/messages', { model: 'test/m', max_tokens: 16, stream: true, messages: [{ role: 'user', content: name }] });
    expect(messages).toEqual({ type: 'error', error: { type: c.anthropic, message: expect.stringContaining('mid-stream'), error_type: c.cause } });
    const responses = await lastData('/v1/responses', { model: 'test/r', stream: true, input: name });
    expect(responses.type).toBe('response.failed');
    expect(responses.response.error).toEqual({ code: c.responsesCode, message: expect.stringContaining('mid-stream'), error_type: c.cause });
  });
});

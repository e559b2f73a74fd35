import { connect } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { schemaValidator, violations } from '../conformance/openapi-fixtures.js';
import { emulatorFolder } from '../support/emulator-folder.js';
import type { Emulator } from '../../src/emulator/server.js';

// Every status `router serve` answers under `/v1/messages` has the error type Anthropic's clients expect for it,
// in the OpenAPI's AnthropicMessagesErrorResponse (whose list of types is the service's: it has no
// `request_too_large`, so a 413 is `invalid_request_error`, the type Anthropic's API gives any other 4xx).
// Before: a 405 (and 413 aside, any status not in a short list: 500, 502, 504) said `api_error`.
const folder = emulatorFolder('router-messages-errors-');
const ASK = { model: 'local/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
const validate = schemaValidator('AnthropicMessagesErrorResponse');

/** `POST /v1/messages` with `key`, a fault header when given: the status and the parsed body. */
async function post(e: Emulator, key: string, body: unknown = ASK, fault?: string, path = '/v1/messages', method = 'POST') {
  const res = await fetch(`${e.apiRoot}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json', ...(fault ? { 'x-router-fault': fault } : {}) }, body: method === 'POST' ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as { type: string; error: { type: string; message: string }; request_id: string } };
}

/** A messages request declaring a body over the largest one taken (32 MiB): the answer, read off the socket. */
function tooLarge(e: Emulator, key: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(e.port, '127.0.0.1');
    let got = '';
    socket.on('error', reject);
    socket.on('data', (c) => {
      got += c;
      const [head, rest = ''] = got.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? NaN);
      if (rest.length < length) return;
      socket.destroy();
      resolve({ status: Number(head!.split(' ')[1]), body: JSON.parse(rest.slice(0, length)) });
    });
    socket.write(`POST /api/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${33 * 1024 * 1024}\r\n\r\n{"model":"local/echo"`);
  });
}

describe.each(['spec', 'deployed'] as const)('/v1/messages error types by status (%s)', (flavor) => {
  it('each status its Anthropic type, each body the OpenAPI\'s error shape', async () => {
    const e = await folder.start(flavor, { flavor });
    const { apiKey, managementKey } = e.store.firstKeys();
    const poor = e.store.createWorkspace('poor', 0).apiKey;
    const made = await fetch(`${e.apiRoot}/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'spent', limit: 0 }) });
    const spent = ((await made.json()) as { key: string }).key;
    const table: [number, string, () => ReturnType<typeof post>][] = [
      [400, 'invalid_request_error', () => post(e, apiKey, { ...ASK, max_tokens: 0 })],
      [401, 'authentication_error', () => post(e, 'sk-wrong')],
      [402, 'billing_error', () => post(e, poor)],
      [403, 'permission_error', () => post(e, spent)],
      [404, 'not_found_error', () => post(e, apiKey, ASK, undefined, '/v1/messages/count_tokens')],
      [405, 'invalid_request_error', () => post(e, apiKey, undefined, undefined, '/v1/messages', 'GET')],
      [408, 'timeout_error', () => post(e, apiKey, ASK, '408')],
      [413, 'invalid_request_error', () => tooLarge(e, apiKey)],
      [429, 'rate_limit_error', () => post(e, apiKey, ASK, '429,retry_after=1')],
      [500, 'api_error', () => post(e, apiKey, ASK, '500')],
      [502, 'api_error', () => post(e, apiKey, ASK, '502')],
      [503, 'overloaded_error', () => post(e, apiKey, ASK, '503')],
      [504, 'timeout_error', () => post(e, apiKey, ASK, '504')],
      [529, 'overloaded_error', () => post(e, apiKey, ASK, '529')],
    ];
    const seen = [];
    for (const [status, , ask] of table) {
      const r = await ask();
      expect(violations(validate, r.body), `HTTP ${status}`).toBe('');
      seen.push([r.status, r.body.error.type]);
    }
    expect(seen).toEqual(table.map(([status, type]) => [status, type]));
  });

  it('the SDK reads them as their classes, the type in the error it throws', async () => {
    const e = await folder.start(`${flavor}-sdk`, { flavor });
    const client = new Anthropic({ apiKey: e.store.firstKeys().apiKey, baseURL: e.apiRoot, maxRetries: 0 });
    const failed = (fault: string) => client.messages.create(ASK as Anthropic.MessageCreateParamsNonStreaming, { headers: { 'x-router-fault': fault } }).then(
      () => expect.fail(`answered despite the ${fault} fault`),
      (err: unknown) => err as InstanceType<typeof Anthropic.APIError>,
    );
    const limited = await failed('429,retry_after=1');
    expect([limited instanceof Anthropic.RateLimitError, (limited.error as { error: { type: string } }).error.type]).toEqual([true, 'rate_limit_error']);
    const slow = await failed('504');
    expect([slow instanceof Anthropic.InternalServerError, (slow.error as { error: { type: string } }).error.type]).toEqual([true, 'timeout_error']);
  });
});

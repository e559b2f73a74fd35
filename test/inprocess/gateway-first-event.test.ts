import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders, ProvidersFileError } from '../../src/emulator/providers/config.js';

// A provider that answers 200 and then only keep-alive comments (`: ping`, as the real service sends
// while a model thinks) resets undici's body timeout with each one: with first_event_timeout_ms it is
// passed over for the next provider, streamed or not; without it, the gateway keeps waiting.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let pinger: Server;
/** Answers a stream with the role-only first chunk OpenAI and vLLM send, then only pings. */
let roler: Server;
const answers = new Set<ServerResponse>();
let client: OpenAI;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-first-event-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  pinger = createServer((req, res) => {
    req.resume();
    answers.add(res);
    const streamed = req.headers.accept?.includes('text/event-stream') ?? true;
    res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
    const ping = setInterval(() => res.write(streamed ? ': ping\n\n' : ' '), 50);
    res.on('close', () => clearInterval(ping));
  });
  await new Promise<void>((r) => pinger.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(pinger.address() as AddressInfo).port}/v1`;
  roler = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    answers.add(res);
    req.on('end', () => {
      // For local/empty, the role chunk carries an empty tool_calls list too, as some servers send.
      const empty = (JSON.parse(body) as { model: string }).model === 'local/empty' ? { tool_calls: [] } : {};
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'gen-r', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '', ...empty }, finish_reason: null }] })}\n\n`);
      const ping = setInterval(() => res.write(': ping\n\n'), 50);
      res.on('close', () => clearInterval(ping));
    });
  });
  await new Promise<void>((r) => roler.listen(0, '127.0.0.1', r));
  const rolerUrl = `http://127.0.0.1:${(roler.address() as AddressInfo).port}/v1`;
  const yaml = [
    'providers:',
    `  - { name: pinger, base_url: "${url}", api_key_env: UP, timeout_ms: 5000, first_event_timeout_ms: 300, models: { test/m: local/lorem } }`,
    `  - { name: roler, base_url: "${rolerUrl}", api_key_env: UP, timeout_ms: 5000, first_event_timeout_ms: 300, models: { test/r: local/lorem, test/e: local/empty } }`,
    `  - { name: good, base_url: "${upstream.apiRoot}/v1", api_key_env: UP, models: { test/m: local/lorem, test/r: local/lorem, test/e: local/lorem } }`,
  ].join('\n');
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP: upstream.store.firstKeys().apiKey }) } });
  client = new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const res of answers) res.destroy();
  await new Promise((r) => pinger?.close(r));
  await new Promise((r) => roler?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const ask = { model: 'test/m', messages: [{ role: 'user' as const, content: 'write 12 words' }] };

describe('first_event_timeout_ms', () => {
  it('passes over a provider that only pings, for a whole answer and a stream, and router_metadata says why', async () => {
    const whole = await client.chat.completions.create(ask, { headers: { 'x-router-metadata': 'enabled' } });
    expect(whole.choices[0]!.message.content!.split(' ')).toHaveLength(12);
    const summary = (whole as unknown as { router_metadata: { summary: string } }).router_metadata.summary;
    expect(summary).toContain('via good (attempt 2); failed: pinger (pinger: no answer within first_event_timeout_ms (300 ms)');
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text.split(' ')).toHaveLength(12);
  });

  /** A streamed chat of `model` through the gateway: its text, and the routing summary of its metadata. */
  async function streamed(model: string): Promise<{ text: string; summary: string }> {
    const stream = await client.chat.completions.create({ ...ask, model, stream: true }, { headers: { 'x-router-metadata': 'enabled' } });
    let text = '';
    let summary = '';
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      summary ||= (c as unknown as { router_metadata?: { summary: string } }).router_metadata?.summary ?? '';
    }
    return { text, summary };
  }

  it('passes over a provider whose stream sends a role-only first chunk and then only pings', async () => {
    // Before: the role chunk stopped the timer, and the gateway waited on the pings until timeout_ms.
    const { text, summary } = await streamed('test/r');
    expect(text.split(' ')).toHaveLength(12);
    expect(summary).toContain('via good (attempt 2); failed: roler (roler: no answer within first_event_timeout_ms (300 ms)');
  });

  it('passes over one whose role chunk carries an empty tool_calls list: the caller never sees that provider', async () => {
    // Before: the relay took the empty list for a tool call and opened the caller's stream, while the
    // timer, which does not, still ran: 300 ms later the caller got an error chunk mid-stream.
    const { text, summary } = await streamed('test/e');
    expect(text.split(' ')).toHaveLength(12);
    expect(summary).toContain('via good (attempt 2); failed: roler (roler: no answer within first_event_timeout_ms (300 ms)');
  });

  it('is a whole number of milliseconds, and unset means no such bound', () => {
    const file = (v: string) => `providers:\n  - { name: p, base_url: "http://127.0.0.1:1/v1", first_event_timeout_ms: ${v}, models: { test/m: m } }\n`;
    expect(() => parseProviders(file('0.5'), {})).toThrow(ProvidersFileError);
    expect(() => parseProviders(file('"soon"'), {})).toThrow('first_event_timeout_ms must be a whole number of milliseconds');
    expect(parseProviders(file('1500'), {}).providers[0]!.firstEventMs).toBe(1500);
    expect(parseProviders('providers:\n  - { name: p, base_url: "http://127.0.0.1:1/v1", models: { test/m: m } }\n', {}).providers[0]!.firstEventMs).toBeUndefined();
  });
});

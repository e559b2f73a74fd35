import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LLMock } from '@copilotkit/aimock';
import { withoutGatewayIds } from '../support/upstreams.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-env.js';
import { aimockGateway, sseData, startAimock, streamedText } from '../support/aimock.js';

// `router serve --providers FILE --record DIR` over aimock, then `--replay DIR` with aimock stopped:
// every answer again byte for byte, a stream aimock cut included. And a batch over aimock.
let dir: string;
let mock: LLMock;

const WEATHER = { name: 'get_weather', arguments: '{"city":"Paris"}' };
const TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const providers = (url: string) => `providers:
  - { name: aimock, base_url: "${url}/v1", models: { test/chat: gpt-4o }, embedding_models: { test/embed: text-embedding-3-small }, prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001 } } }
batch_concurrency: 3
`;
const chat = (content: string, stream: boolean, extra: Record<string, unknown> = {}) => ['/chat/completions', { model: 'test/chat', stream, messages: [{ role: 'user', content }], ...extra }] as const;
/** What is asked while recording, and again on replay. */
const ASKED = [
  chat('hello', false),
  chat('hello', true),
  chat('weather', false, { tools: TOOLS }),
  chat('weather', true, { tools: TOOLS }),
  chat('cut after the first token', true),
  ['/embeddings', { model: 'test/embed', input: 'embed me' }] as const,
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-aimock-cassettes-'));
  mock = await startAimock((m) => {
    m.onMessage('hello', { content: 'Hi there, from aimock, in several pieces.' }, { chunkSize: 6 });
    m.onMessage('weather', { toolCalls: [WEATHER] });
    m.onMessage('cut after the first token', { content: 'one two three four' }, { chunkSize: 4, truncateAfterChunks: 3, latency: 10 });
    m.onEmbedding('embed me', { embedding: [0.5, 0.25] });
  });
});

afterAll(async () => {
  await mock?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('--record DIR, then --replay DIR with aimock gone', () => {
  it('answers every request as recorded, byte for byte, the cut stream cut the same way', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await aimockGateway(providers(mock.url), { cassettes: { dir: cassettes, mode: 'record' } });
    const recorded: string[] = [];
    try {
      for (const [path, body] of ASKED) {
        const res = await recorder.post(path, body, false);
        expect(res.status, res.text).toBe(200);
        recorded.push(res.text);
      }
    } finally {
      await recorder.close();
    }
    expect(streamedText(recorded[1]!)).toBe('Hi there, from aimock, in several pieces.');
    expect(sseData(recorded[1]!).filter((e) => e !== '[DONE]' && e.choices[0]?.delta?.content).length).toBeGreaterThan(3);
    expect(sseData(recorded[4]!).at(-2).error.code).toBe(502);
    expect(readdirSync(cassettes).filter((f) => f.endsWith('.json'))).toHaveLength(ASKED.length);
    const cut = readdirSync(cassettes).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8'))).find((c) => JSON.stringify(c.request.body).includes('cut after'));
    expect(cut.response.broken).toBe('aimock: stream broken (UND_ERR_SOCKET)');

    const asked = mock.getRequests().length;
    // aimock asked again, as recorded: the same shapes (ids and created differ, as they may).
    const file = join(dir, 'providers.yaml');
    writeFileSync(file, providers(mock.url));
    const drift = await runCliInProcess(['serve', '--providers', file, '--check-drift', cassettes], { env: { ROUTER_STATE_DIR: join(dir, 'drift-state'), ROUTER_CONFIG_DIR: join(dir, 'drift-config') } });
    expect([drift.code, drift.stdout.trim().split('\n').filter((l) => !l.startsWith('same '))]).toEqual([0, []]);
    // aimock now cuts the streamed hello after its first piece: drift, not a failure to ask.
    mock.prependFixture({ match: { userMessage: 'hello' }, response: { content: 'Hi there, from aimock, in several pieces.' }, chunkSize: 6, truncateAfterChunks: 3, latency: 10 });
    const changed = await runCliInProcess(['serve', '--providers', file, '--check-drift', cassettes], { env: { ROUTER_STATE_DIR: join(dir, 'drift-state'), ROUTER_CONFIG_DIR: join(dir, 'drift-config') } });
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^drift {2}aimock-gpt-4o-\w+\.json\n( {2}- .*\n)* {2}- end: \[DONE\]\n {2}\+ end: broken\n/m);
    expect(changed.stdout.split('\n').filter((l) => l.startsWith('same '))).toHaveLength(ASKED.length - 1);
    mock.clearFixtures();
    const player = await aimockGateway(providers(mock.url), { cassettes: { dir: cassettes, mode: 'replay' } });
    await mock.stop();
    try {
      for (const [i, [path, body]] of ASKED.entries()) {
        const res = await player.post(path, body, false);
        expect([res.status, withoutGatewayIds(res.text)], `${path} ${JSON.stringify(body)}`).toEqual([200, withoutGatewayIds(recorded[i]!)]);
      }
    } finally {
      await player.close();
      mock = await startAimock(() => {});
    }
    expect(asked).toBe(ASKED.length);
  });
});

describe('a batch over aimock', () => {
  it('completes, each request asked of aimock once, each result its answer', async () => {
    const batchMock = await startAimock((m) => m.onMessage(/^item /, { content: 'a batch answer', usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } }));
    const gw = await aimockGateway(providers(batchMock.url));
    try {
      const ids = Array.from({ length: 7 }, (_, i) => `r${i}`);
      const file = join(gw.dir, 'requests.jsonl');
      writeFileSync(file, ids.map((custom_id) => JSON.stringify({ custom_id, body: { model: 'test/chat', messages: [{ role: 'user', content: `item ${custom_id}` }] } })).join('\n') + '\n');
      const env = { ROUTER_API_ROOT: gw.gateway.apiRoot, ROUTER_API_KEY: gw.key, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(gw.dir, 'config'), ROUTER_STATE_DIR: join(gw.dir, 'cli-state') };
      const res = await runCliInProcess(['batch', 'create', file, '--watch', '--results'], { env });
      expect(res.code, res.stderr).toBe(0);
      const results = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((r) => r.custom_id).sort()).toEqual(ids);
      for (const r of results) expect(JSON.stringify(r)).toContain('a batch answer');
      const asked = batchMock.getRequests().filter((r) => r.path === '/v1/chat/completions');
      expect(asked.map((r) => (r.body as any).messages[0].content).sort()).toEqual(ids.map((id) => `item ${id}`));
    } finally {
      await gw.close();
      await batchMock.stop();
    }
  });
});

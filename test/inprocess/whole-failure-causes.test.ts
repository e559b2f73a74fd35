import { beforeAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { FLAVORS, type Emulator, type Flavor } from '../../src/emulator/server.js';
import { call, emulatorFolder, runBatch } from '../support/emulator-folder.js';
import { breakingProviders, breakingUpstream, WHOLE_CASES } from '../support/break-causes.js';
import { startedForAll } from '../support/for-all.js';

// An upstream that answers an error in place of a whole answer (its status and its words, a 200 whose
// body is an error, a body cut off): the caller hears the cause its words name, as a stream's break says
// it (stream-break-causes.test.ts), whether it asked alone (chat, /v1/messages, Responses) or in a batch,
// whose result line carries the same status class and `error_type`. Before: every such failure but a
// 429 was `provider_unavailable` (an overload, a timeout said only in words, an error in a 200's body).
const folder = emulatorFolder('router-whole-failure-causes-');
const upstream = startedForAll(breakingUpstream);
const gatewayOf = (flavor: Flavor, name: string = flavor) => folder.start(name, { flavor, gateway: { config: parseProviders(breakingProviders(upstream.baseUrl), { UP_KEY: 'k' }) } });
const CASES = WHOLE_CASES.map((c) => [c.name, c] as const);

describe('a whole answer that is an error, asked alone', () => {
  let gateway: Emulator;
  beforeAll(async () => {
    gateway = await gatewayOf('spec');
  });
  it.each(CASES)('%s: chat, /v1/messages and Responses say its cause', async (name, c) => {
    const chat = await call(gateway, '/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: name }] });
    expect([chat.status, chat.body.error.metadata.error_type]).toEqual([c.answered, c.cause]);
    const messages = await call(gateway, '/v1/messages', { model: 'test/m', max_tokens: 16, messages: [{ role: 'user', content: name }] });
    expect([messages.status, messages.body.error.type, messages.body.error.error_type]).toEqual([c.answered, c.anthropic, c.cause]);
    const responses = await call(gateway, '/v1/responses', { model: 'test/r', input: name });
    expect([responses.status, responses.body.error.metadata?.error_type ?? responses.body.error.error_type]).toEqual([c.answered, c.cause]);
  });
});

describe.each(FLAVORS)('%s flavour: a batch whose items’ upstream answers errors', (flavor) => {
  let gateway: Emulator;
  beforeAll(async () => {
    gateway = await gatewayOf(flavor, `${flavor}-batches`);
  });
  it('each result line carries the cause and status class the request alone gets', async () => {
    const chat = await runBatch(gateway, flavor, '/v1/chat/completions', 'test/m', WHOLE_CASES.map((c) => ({ messages: [{ role: 'user', content: c.name }] })));
    const messages = await runBatch(gateway, flavor, '/v1/messages', 'test/m', WHOLE_CASES.map((c) => ({ max_tokens: 16, messages: [{ role: 'user', content: c.name }] })));
    // Deployed: exactly one of `response` and `error` is non-null, so its status is not shown.
    const line = (results: any[], i: number) => {
      const item = results.find((r) => r.custom_id === `r${i}`);
      return { status: item.response?.status_code ?? null, type: item.error.type, error_type: item.error.error_type };
    };
    const status = (c: (typeof WHOLE_CASES)[number]) => (flavor === 'spec' ? c.answered : null);
    const got = WHOLE_CASES.map((c, i) => ({ name: c.name, chat: line(chat.results, i), messages: line(messages.results, i) }));
    expect(got).toEqual(WHOLE_CASES.map((c) => ({ name: c.name, chat: { status: status(c), type: 'api_error', error_type: c.cause }, messages: { status: status(c), type: c.anthropic, error_type: c.cause } })));
  });
});

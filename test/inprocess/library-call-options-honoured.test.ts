import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RESOURCE_CALLS, RouterClient, TimeoutError, ValidationError } from '../../src/client/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// Every call's options are checked against one list (RESOURCE_CALLS): a name in it is accepted, so the call must do
// what it says. Before, `raw.send()` read `signal` only (a `timeoutMs` left it unbounded, `headers` were dropped) and
// the batches' list, get and getStreaming dropped `headers`: accepted, silently unread.
let emu: Emulator;
emulatorPerFile('router-call-options-honoured-', (f) => ({ emu } = f));

/** Arguments before a call's options that make it send a request. */
function argsOf(name: string, method: string, at: number): unknown[] {
  if (method === 'createStreaming') return [{ endpoint: '/v1/chat/completions', completion_window: '24h' }, async function* () {}];
  if (method === 'getStreaming') return ['batch_none', () => {}];
  if (name === 'raw') return [{ method: 'GET', path: '/v1/key' }];
  if (name === 'keys' && method === 'update') return ['none', { name: 'x' }];
  const first: Record<string, unknown> = {
    chat: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] },
    responses: { model: 'local/echo', input: 'hi' },
    embeddings: { model: 'local/embed', input: 'hi' },
    speech: { model: 'local/tts', voice: 'alloy', input: 'hi' },
    decisions: { model: 'local/judge', state: 'hi', questions: {} },
    batches: method === 'create' ? { endpoint: '/v1/chat/completions', completion_window: '24h', requests: [] } : method === 'get' ? 'batch_none' : {},
    keys: method === 'create' ? { name: 'probe' } : method === 'list' ? {} : 'none',
    activity: {},
    generations: method === 'feedback' ? { id: 'gen-none' } : 'gen-none',
  };
  return at === 0 ? [] : [first[name]];
}

/** Each call with options: name, method, and the call made with `opts`. */
function everyCall(client: RouterClient) {
  const calls: { label: string; run: (opts: object) => Promise<void> }[] = [];
  for (const [name, methods] of Object.entries(RESOURCE_CALLS)) {
    for (const [method, spec] of Object.entries(methods)) {
      if (!spec) continue;
      const resource = (client as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[name]!;
      const run = async (opts: object) => {
        const made = resource[method]!(...argsOf(name, method, spec[0]), opts);
        if (made && typeof made === 'object' && Symbol.asyncIterator in made && !('then' in made)) await (made as AsyncGenerator).next();
        else await made;
      };
      calls.push({ label: `${name}.${method}`, run });
    }
  }
  return calls;
}

describe('every option a call accepts is one it reads', () => {
  it('headers reach the service from every call', async () => {
    const { managementKey } = emu.store.firstKeys();
    const client = new RouterClient({ apiKey: managementKey, apiRoot: emu.apiRoot, maxRetries: 0 });
    const calls = everyCall(client);
    expect(calls.length).toBe(28);
    for (const call of calls) {
      const from = emu.requestLog.length;
      await call.run({ headers: { 'x-probe': call.label } }).catch(() => undefined);
      const seen = emu.requestLog.slice(from).map((r) => r.headers['x-probe']);
      expect(seen.length, call.label).toBeGreaterThan(0);
      for (const probe of seen) expect(probe, call.label).toBe(call.label);
    }
    await client.close();
  });

  it('a session and routing metadata reach the service from every call that takes them, and only those take them', async () => {
    const { managementKey } = emu.store.firstKeys();
    const client = new RouterClient({ apiKey: managementKey, apiRoot: emu.apiRoot, maxRetries: 0 });
    const said: Record<string, string[]> = { sessionId: [], routerMetadata: [] };
    for (const call of everyCall(client)) {
      for (const [option, value, header] of [['sessionId', `session-${call.label}`, 'x-session-id'], ['routerMetadata', true, 'x-router-experimental-metadata']] as const) {
        const from = emu.requestLog.length;
        const refused = await call.run({ [option]: value }).then(() => false, (err: unknown) => err instanceof ValidationError && err.message.includes(`no option "${option}"`));
        const seen = emu.requestLog.slice(from).map((r) => r.headers[header]);
        if (refused) {
          expect(seen, `${call.label} sent nothing`).toEqual([]);
          continue;
        }
        said[option]!.push(call.label);
        expect(seen.length, `${call.label} ${option}`).toBeGreaterThan(0);
        for (const got of seen) expect(got, `${call.label} ${option}`).toBe(value === true ? 'enabled' : value);
      }
    }
    // api.md: a session id on chat, Responses, speech and decisions (and the gateway's embeddings); routing metadata
    // on routed answers. Before, embeddings dropped its sessionId and decisions its routerMetadata (both taken,
    // unsent), and batches, keys, credits and the listings took both and sent them to no purpose.
    const routed = ['chat.create', 'chat.stream', 'chat.streamText', 'responses.create', 'responses.stream', 'embeddings.create', 'speech.create'];
    expect(said.sessionId!.sort()).toEqual([...routed, 'decisions.create', 'raw.send'].sort());
    expect(said.routerMetadata!.sort()).toEqual([...routed, 'raw.send'].sort());
    await client.close();
  });

  describe('against a service that never answers', () => {
    let server: Server;
    let apiRoot: string;
    beforeAll(async () => {
      server = createServer(() => {});
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    });

    it('a call\'s timeoutMs bounds every call (the client\'s own is an hour)', async () => {
      const client = new RouterClient({ apiKey: 'sk-rt-v1-probe-0123456789', apiRoot, maxRetries: 0, timeoutMs: 3_600_000 });
      const calls = everyCall(client);
      const ended = await Promise.all(calls.map(async (call) => `${call.label}: ${await call.run({ timeoutMs: 300 }).then(() => 'answered', (err: unknown) => (err instanceof TimeoutError ? 'timed out' : String(err)))}`));
      expect(ended).toEqual(calls.map((call) => `${call.label}: timed out`));
      await client.close();
    }, 60_000);
  });
});

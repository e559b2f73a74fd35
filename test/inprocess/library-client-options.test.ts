import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient, ValidationError, type ClientOptions } from '../../src/client/index.js';
import { chatModel, ConversationStore, serviceListPrices, SpendGuard } from '../../src/kit/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { tempFolder } from '../support/temp-folder.js';

// A newcomer's first client, written as another SDK taught them (n12, the 21st newcomer pass): an option this client
// does not know was left unread. openai's `baseURL` meant a client made for a local root called the service's
// (https://openrouter.ai/api) with the key; a `fetch` given to see or change the requests was never called.
let emu: Emulator;
emulatorPerFile('router-client-options-', (f) => ({ emu } = f));
const dir = tempFolder('router-client-options-');

const made = (opts: object) => {
  try {
    return new RouterClient(opts as ClientOptions);
  } catch (err) {
    return err;
  }
};

describe('the options of new RouterClient()', () => {
  it("refuses another SDK's name for an option, naming its own (before: baseURL unread, the calls went to the service's root)", () => {
    const key = emu.store.firstKeys().apiKey;
    const cases: [object, string][] = [
      [{ apiKey: key, baseURL: emu.apiRoot }, 'new RouterClient() has no option "baseURL": did you mean apiRoot?'],
      [{ apiKey: key, apiRoot: emu.apiRoot, fetch: globalThis.fetch }, 'new RouterClient() has no option "fetch": did you mean dispatcher?'],
      [{ api_key: key, apiRoot: emu.apiRoot }, 'new RouterClient() has no option "api_key": did you mean apiKey?'],
      [{ apiKey: key, apiRoot: emu.apiRoot, timeout: 5000 }, 'new RouterClient() has no option "timeout": did you mean timeoutMs?'],
    ];
    for (const [opts, message] of cases) {
      const err = made(opts);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).message).toBe(message);
      expect((err as ValidationError).code).toBe('invalid_request');
    }
  });

  it('names every option it takes for a name no SDK uses', () => {
    const err = made({ apiKey: 'sk-x', apiRoot: emu.apiRoot, modle: 'local/echo' });
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toBe('new RouterClient() has no option "modle"; it takes apiKey, keyless, apiRoot, timeoutMs, maxRetries, userAgent, headers, onRetry, onPlainHttp, dispatcher, proxy, batches');
  });

  it('takes every option it names, and an option given as undefined as one not given', async () => {
    const key = emu.store.firstKeys().apiKey;
    const all = { apiKey: key, keyless: false, apiRoot: emu.apiRoot, timeoutMs: 30_000, maxRetries: 1, userAgent: 'n12/1', headers: {}, onRetry: () => {}, dispatcher: undefined, proxy: undefined, batches: {} };
    const client = new RouterClient(all);
    expect((await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'all' }] })).choices[0]?.message.content).toBe('all');
    await client.close();
    // As a program reading its settings from the environment writes it (`timeoutMs: process.env.X && Number(…)`).
    const unset = new RouterClient({ apiKey: key, apiRoot: emu.apiRoot, timeoutMs: undefined, maxRetries: undefined, userAgent: undefined, headers: undefined, onRetry: undefined, keyless: undefined });
    const plain = new RouterClient({ apiKey: key, apiRoot: emu.apiRoot });
    expect([unset.core.timeoutMs, unset.core.maxRetries]).toEqual([plain.core.timeoutMs, plain.core.maxRetries]);
    await plain.close();
    // A prompt, a conversation kept, and a guard given only undefined options work as without them.
    const env = { ...process.env, ROUTER_STATE_DIR: dir() };
    const store = new ConversationStore({ dir: undefined, env });
    const guard = new SpendGuard({ prices: serviceListPrices(unset), maxCost: undefined, budgets: undefined, env, signal: undefined, on: undefined });
    const talk = chatModel(unset, 'local/echo').conversation({ store, id: 'unset', last: undefined });
    const r = await talk.prompt('nothing set', {
      model: undefined, system: undefined, attachments: undefined, schema: undefined, tools: undefined, maxToolRounds: undefined, toolTimeoutMs: undefined,
      resultsBytes: undefined, approve: undefined, toolImages: undefined, request: undefined, signal: undefined, guard, beforeRequest: undefined, onText: undefined, onToolCall: undefined,
    });
    expect([r.text, r.model, store.load('unset').messages.length]).toEqual(['nothing set', 'local/echo', 2]);
    const answer = await unset.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'call options' }] }, { signal: undefined, timeoutMs: undefined, headers: undefined, answering: undefined });
    expect(answer.choices[0]?.message.content).toBe('call options');
    await unset.close();
  });
});

import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient, ValidationError } from '../../src/client/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// A client made without a key (`new RouterClient({ apiRoot })`): every endpoint of the service needs one
// (api.md), so each call is refused before it is sent, with the client's typed error naming `apiKey`.
let emu: Emulator;
emulatorPerFile('router-client-no-key-', (f) => ({ emu } = f));

const NO_KEY = /^no API key was given: pass apiKey to new RouterClient\(\{ apiKey \}\)/;

describe('a client without an API key', () => {
  it('refuses a chat, a stream, the model list and a batch call before sending any (before: sent, a 401)', async () => {
    const client = new RouterClient({ apiRoot: emu.apiRoot });
    const before = emu.requestLog.length;
    const body = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'hi' }] };
    const calls = [() => client.chat.create(body), async () => client.chat.stream(body), () => client.models.list(), () => client.batches.list()];
    for (const call of calls) {
      const err = await call().then(() => 'sent', (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(NO_KEY);
    }
    expect(emu.requestLog.length).toBe(before);
    await client.close();
  });

  it('takes an authorization header a program gives instead of a key', async () => {
    const key = emu.store.firstKeys().apiKey;
    const client = new RouterClient({ apiRoot: emu.apiRoot, headers: { Authorization: `Bearer ${key}` } });
    const answer = await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe('hi');
    await client.close();
  });

  it('sends without a key when made keyless on purpose (a probe of whether an API answers at a root)', async () => {
    const client = new RouterClient({ apiRoot: emu.apiRoot, keyless: true });
    const before = emu.requestLog.length;
    const err = await client.models.list().then(() => 'answered', (e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect(emu.requestLog.length).toBe(before + 1);
    await client.close();
  });
});

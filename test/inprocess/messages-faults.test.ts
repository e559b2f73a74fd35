import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { emulatorFolder } from '../support/emulator-folder.js';

// A `malformed` or `cut` fault on a whole `/v1/messages` answer mangles the messages answer, as it
// mangles chat's on chat's route. Before: `malformed` sent the first half of chat's completion
// (`"object":"chat.completion"`), and `cut` sent nothing at all (not even the status line).
const folder = emulatorFolder('router-messages-faults-');

/** A whole messages answer under `fault`: its status, its content-length, the bytes that came, and how it ended. */
function faulted(e: Emulator, model: string, fault: string): Promise<{ status?: number; length?: string; text: string; ended: string }> {
  const body = JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hello there' }] });
  return new Promise((resolve) => {
    const req = request(`${e.apiRoot}/v1/messages`, { method: 'POST', headers: { 'x-api-key': e.store.firstKeys().apiKey, 'content-type': 'application/json', 'x-router-fault': fault } }, (res) => {
      let text = '';
      const done = (ended: string) => resolve({ status: res.statusCode, length: res.headers['content-length'], text, ended });
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => done('end'));
      res.on('aborted', () => done('aborted'));
      res.on('error', () => done('aborted'));
    });
    req.on('error', (err) => resolve({ text: '', ended: `no answer: ${err.message}` }));
    req.end(body);
  });
}

describe('a fault mangling a whole /v1/messages answer', () => {
  it('mangles the messages answer: a fake model’s and a gateway’s', async () => {
    const upstream = await folder.start('upstream');
    const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/echo } }\n`;
    const gateway = await folder.start('gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
    for (const model of ['local/echo', 'test/m']) {
      const malformed = await faulted(gateway, model, 'malformed');
      expect(malformed, model).toMatchObject({ status: 200, ended: 'end', text: expect.stringMatching(/^\{"id":"[^"]+","type":"message","role":"assistant"/) });
      expect(() => JSON.parse(malformed.text)).toThrow();
      const cut = await faulted(gateway, model, 'cut');
      expect(cut, model).toMatchObject({ status: 200, ended: 'aborted', text: expect.stringMatching(/^\{"id":"[^"]+","type":"message"/) });
      // Half the answer its content-length promised.
      expect(Buffer.byteLength(cut.text), model).toBe(Math.floor(Number(cut.length) / 2));
    }
  });
});

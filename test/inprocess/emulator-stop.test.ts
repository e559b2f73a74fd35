import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { SETTLE, until } from '../support/until.js';

// An emulator that has closed writes nothing more: a batch it was driving does not recreate its state folder.
describe('an emulator closed while it drives a batch', () => {
  it.each(['validating', 'in_progress', 'finalizing'])('closed while the batch is %s: the removed state folder stays removed', async (status) => {
    const dir = mkdtempSync(join(tmpdir(), 'router-emu-stop-'));
    const emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 150 });
    const { apiKey, managementKey } = emu.store.firstKeys();
    const call = async (method: string, path: string, key: string, body?: unknown) =>
      (await fetch(`${emu.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as Promise<any>;
    await call('POST', '/_emulator/credits', managementKey, { amount: 100 });
    const created = await call('POST', '/v1/batches', apiKey, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } }] });
    // A state, not 2 s of polls (too few on a loaded machine): the engine in this process cannot step past it between polls.
    expect(await until(() => emu.batches.store.get(created.id)?.status === status)).toBe(true);
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
    // Until the engine has let the batch go (its drive returned from the pause it was in), not for a time that a loaded
    // machine can pass before an engine that went on would write: every write of a drive is made before it returns.
    const running = (emu.batches as unknown as { running: Set<string> }).running;
    await vi.waitFor(() => expect(running.size).toBe(0), SETTLE);
    expect(existsSync(dir) ? readdirSync(dir, { recursive: true }) : []).toEqual([]);
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConnectionError, RouterClient, TimeoutError } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { deadPort } from '../support/upstreams.js';

// A program switches on a client error's `code`, as it does on a kit error's: each one of docs/library.md's table.
let emu: Emulator;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-error-codes-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0 });
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The codes docs/library.md lists for the client's own errors. */
function documentedCodes(): string[] {
  const page = readFileSync(resolve(import.meta.dirname, '..', '..', 'docs', 'library.md'), 'utf8');
  const section = page.slice(page.indexOf('### Errors of the client'), page.indexOf('### From CommonJS'));
  return [...section.matchAll(/^\|[^|]*\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
}

async function failure(apiRoot: string, opts: { timeoutMs?: number; fault?: string } = {}): Promise<unknown> {
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot, maxRetries: 0, timeoutMs: opts.timeoutMs });
  try {
    const headers = opts.fault ? { 'x-router-fault': opts.fault } : undefined;
    return await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { headers }).then(
      () => undefined,
      (err: unknown) => err,
    );
  } finally {
    await client.close();
  }
}

it('a refused connection and a timeout each have a documented code; the system code stays in cause', async () => {
  const documented = documentedCodes();
  expect(documented).toEqual(expect.arrayContaining(['refused', 'timeout', 'failed', 'invalid_request']));

  const refused = await failure(`http://127.0.0.1:${await deadPort()}/api`);
  expect(refused).toBeInstanceOf(ConnectionError);
  expect(refused).toMatchObject({ code: 'refused', maybeDelivered: false, cause: { code: 'ECONNREFUSED' } });

  const timedOut = await failure(emu.apiRoot, { timeoutMs: 300, fault: 'held' });
  expect(timedOut).toBeInstanceOf(TimeoutError);
  expect(timedOut).toMatchObject({ code: 'timeout', maybeDelivered: true });

  const reset = await failure(emu.apiRoot, { fault: 'reset' });
  expect(reset).toMatchObject({ name: 'ConnectionError', code: 'failed' });

  for (const err of [refused, timedOut, reset]) expect(documented).toContain((err as { code: string }).code);
});

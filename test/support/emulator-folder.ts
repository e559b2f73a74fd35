import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions, type Flavor } from '../../src/emulator/server.js';

/**
 * In-process emulators of one test file, each with its state in a folder of its own under one temp
 * folder (a name started again is a restart); all closed, and the folder removed, after the file.
 */
export function emulatorFolder(prefix: string) {
  let dir = '';
  const started: Emulator[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const e of started) await e.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    /** The temp folder (set once the file's tests start). */
    get dir() {
      return dir;
    },
    async start(name: string, opts: Partial<EmulatorOptions> = {}): Promise<Emulator> {
      const e = await startEmulator({ port: 0, batchDelayMs: 0, ...opts, stateDir: join(dir, name) });
      started.push(e);
      return e;
    },
    /** Closes `e` now (to start its name again). */
    async stop(e: Emulator): Promise<void> {
      await e.close();
      started.splice(started.indexOf(e), 1);
    },
  };
}

/** `path` under the API root, POSTed with `body` (GET without), with `key` (the first API key): status and parsed body. */
export async function call(e: Emulator, path: string, body?: unknown, key = e.store.firstKeys().apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

/** A batch of `bodies` (custom ids r0, r1, …) for `model` on `endpoint`, created and got until it completed. */
export async function runBatch(e: Emulator, flavor: Flavor, endpoint: string, model: string, bodies: Record<string, unknown>[]): Promise<any> {
  const path = flavor === 'deployed' ? '/beta/batches' : '/v1/batches';
  const created = await call(e, path, { endpoint, model, completion_window: '24h', requests: bodies.map((body, i) => ({ custom_id: `r${i}`, body })) });
  expect(created.body.id, JSON.stringify(created.body)).toMatch(/^batch_/);
  for (;;) {
    const seen = (await call(e, `${path}/${created.body.id}`)).body;
    if (seen.status === 'completed') return seen;
    expect(seen.status).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 20));
  }
}

import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// With node's 5 s, a client reusing a connection 3-5 s idle (undici keeps one for the hint less 2 s, on a timer up
// to 1 s late; later on a loaded machine) could send as the server closed it: the request fails, and a paid one is
// never sent again. Our own client keeps one at most 30 s (src/internal/keep-alive.ts); other clients need the 65 s.
let dir: string;
let emu: Emulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-keep-alive-'));
  emu = await startEmulator({ stateDir: dir, port: 0 });
});
afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('keeps an idle connection 65 s and says so in the Keep-Alive hint', async () => {
  const hint = await new Promise<string | undefined>((resolve, reject) => {
    get(`${emu.apiRoot}/v1/models`, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['keep-alive'] as string | undefined));
    }).on('error', reject);
  });
  expect(hint).toBe('timeout=65');
  expect(emu.server.keepAliveTimeout).toBe(65_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { APIError, isNoListing, RouterClient } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// docs/library.md: batches are found at /v1/batches, else the deployed /beta/batches; the deployed service lists
// none, and the library's list() there is an APIError that isNoListing() names (a program's way to tell).
const dir = mkdtempSync(join(tmpdir(), 'router-batch-list-'));
const started: Emulator[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

for (const flavor of ['spec', 'deployed'] as const) {
  it(`${flavor}: a batch made and got by the client; the listing there or isNoListing`, async () => {
    const emu = await startEmulator({ stateDir: join(dir, flavor), port: 0, batchDelayMs: 0, flavor });
    started.push(emu);
    const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
    try {
      const made = await client.batches.create({ endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'one' }] } }] });
      expect((await client.batches.get(made.id)).id).toBe(made.id);
      expect(client.batches.path).toBe(flavor === 'spec' ? '/v1/batches' : '/beta/batches');
      const listed = await client.batches.list().then((l) => l.data.map((b) => b.id), (err: unknown) => err);
      if (flavor === 'spec') expect(listed).toContain(made.id);
      else {
        expect(listed).toBeInstanceOf(APIError);
        expect(isNoListing(listed)).toBe(true);
        expect(client.batches.hasListing).toBe(false);
      }
    } finally {
      await client.close();
    }
  });
}

import { settlementsOnDisk } from '../support/settlements-on-disk.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { storageHooks } from '../../src/emulator/state/fsutil.js';

// Charges wait to be written together (charge-journal.ts); each answer's end, and a stream's [DONE],
// first writes its charge's line: a kill -9 the moment a caller has its answer loses no charge.
const dir = mkdtempSync(join(tmpdir(), 'router-charge-before-end-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settledOnDisk = () => settlementsOnDisk(dir);

it('every stream of a burst has its charge on disk by the time its [DONE] comes', async () => {
  const emu = await startEmulator({ stateDir: dir, port: 0 });
  // The timed saves are held at their rename: the segments stay, as a kill -9 before it leaves them.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  storageHooks.beforeLaterRename = () => gate;
  try {
    const key = emu.store.firstKeys().apiKey;
    const before = settledOnDisk();
    const seen: number[] = [];
    const one = async (i: number) => {
      const res = await fetch(`${emu.apiRoot}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: `write ${i + 3} words` }] }),
      });
      expect(res.status).toBe(200);
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) {
        text += decoder.decode(chunk, { stream: true });
        // At [DONE], before the end: this stream's settlement and those of every stream done before it.
        if (text.includes('data: [DONE]')) {
          seen.push(settledOnDisk() - before);
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => one(i)));
    expect(seen.length).toBe(16);
    seen.forEach((onDisk, i) => expect(onDisk, `stream done ${i + 1}th`).toBeGreaterThanOrEqual(i + 1));
  } finally {
    delete storageHooks.beforeLaterRename;
    release();
    await emu.close();
  }
});

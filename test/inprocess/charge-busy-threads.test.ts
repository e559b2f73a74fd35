import { settlementsOnDisk } from '../support/settlements-on-disk.js';
import { execFileSync } from 'node:child_process';
import { constants, closeSync, mkdtempSync, open, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { storageHooks } from '../../src/emulator/state/fsutil.js';

// A charge's line is written on the event loop when its answer ends (charge-journal.ts): an answer does
// not wait for libuv's threads, which other work (a save, a file read, a DNS lookup) may hold. Here every
// thread is held by an open(2) of a FIFO no one writes to, as a slow disk would hold them.
const dir = mkdtempSync(join(tmpdir(), 'router-charge-busy-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settledOnDisk = () => settlementsOnDisk(dir);

/** Holds each of libuv's threads in an open(2) of a FIFO until `release()` opens its other end. */
function holdThreads(): { release(): void } {
  const fifos = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, (_, i) => join(dir, `fifo-${i}`));
  for (const fifo of fifos) {
    execFileSync('mkfifo', [fifo]);
    open(fifo, 'r', (err, fd) => {
      if (!err) closeSync(fd);
    });
  }
  return {
    release() {
      // A writer that does not block: the reader waiting in open(2) counts as the FIFO's reader.
      for (const fifo of fifos) closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    },
  };
}

it("a paid stream ends, its charge on disk, while every one of libuv's threads is busy", async () => {
  const emu = await startEmulator({ stateDir: dir, port: 0 });
  // The timed saves are held at their rename, as in charge-before-end: only the journal holds the charges.
  let releaseSaves!: () => void;
  const gate = new Promise<void>((r) => (releaseSaves = r));
  storageHooks.beforeLaterRename = () => gate;
  let threads: { release(): void } | undefined;
  try {
    const key = emu.store.firstKeys().apiKey;
    const ask = () =>
      fetch(`${emu.apiRoot}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: 'write 5 words' }] }),
      });
    // One first, the emulator's start-up work (segments opened ahead, the first save) done with free threads.
    expect(await (await ask()).text()).toContain('data: [DONE]');
    const before = settledOnDisk();
    threads = holdThreads();
    let text = '';
    let onDiskAtDone = -1;
    const decoder = new TextDecoder();
    // Its hold is written before the answer begins, its settlement before it ends.
    const reading = (async () => {
      const res = await ask();
      expect(res.status).toBe(200);
      for await (const chunk of res.body!) {
        text += decoder.decode(chunk, { stream: true });
        if (onDiskAtDone < 0 && text.includes('data: [DONE]')) onDiskAtDone = settledOnDisk() - before;
      }
    })();
    // Not a speed goal: with its charges' writes waiting for a thread, the answer never ends while they are held.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([reading.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), 30_000)))]);
    clearTimeout(timer);
    threads.release();
    threads = undefined;
    await reading;
    expect(ended, "the answer ended while libuv's threads were busy").toBe(true);
    expect(onDiskAtDone).toBe(1);
  } finally {
    threads?.release();
    delete storageHooks.beforeLaterRename;
    releaseSaves();
    await emu.close();
  }
});

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/client/types.js';
import { RouterClient } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { takeLock } from '../../src/internal/file-lock.js';
import { ConversationStore, FileLockTimeout, chatModel, type ConversationRecord } from '../../src/kit/index.js';
import * as batch from '../../src/batch/index.js';

// A store's save waits for the lock beside the conversation's file. In a program of its own
// (router chat) a blocking wait is fine; in a host program it froze the event loop for the whole
// wait (seconds on a lock left by another container). saveAsync, and a conversation's prompt(), wait
// on timers. The lock here is held by this very process (takeLock) and let go by the test itself,
// so the save can only end after the release: nothing depends on how long anything takes.
let emu: Emulator;
let dir: string;
let client: RouterClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-kit-lock-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
});
afterAll(async () => {
  await client.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The lock of conversation `id`'s file, taken as another holder would: released by the function returned. */
function holdLockOf(store: ConversationStore, id: string): () => void {
  mkdirSync(store.dir, { recursive: true });
  const taken = takeLock(join(store.dir, `${id}.json.lock`));
  if (!('release' in taken)) throw new Error('lock not taken');
  return taken.release;
}

/** A host's timer: resolves once the event loop has run one. */
const aTimerRuns = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('a conversation store waiting for its lock', () => {
  it("saveAsync waits on timers: the host's timers fire meanwhile; it keeps the turn once the lock is let go", async () => {
    const store = new ConversationStore({ dir: join(dir, 'kept') });
    const turn: ChatMessage[] = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }];
    const now = new Date().toISOString();
    const record: ConversationRecord = { id: 'waits', title: 'hi', model: 'local/echo', created_at: now, updated_at: now, messages: turn };
    const release = holdLockOf(store, 'waits');
    let settled = false;
    const saving = store.saveAsync(record, undefined, turn).finally(() => (settled = true));
    await aTimerRuns();
    await aTimerRuns();
    expect(settled).toBe(false);
    expect(existsSync(join(store.dir, 'waits.json'))).toBe(false);
    release();
    const kept = await saving;
    expect(store.load('waits')).toEqual(kept);
    expect(kept.messages.map((m) => m.content)).toEqual(['hi', 'hello']);
  });

  it("a conversation's prompt keeps its turn through saveAsync: the host's timers fire while it waits", async () => {
    let entered!: () => void;
    const inSave = new Promise<'in save'>((resolve) => (entered = () => resolve('in save')));
    class Watched extends ConversationStore {
      override saveAsync(...args: Parameters<ConversationStore['saveAsync']>) {
        entered();
        return super.saveAsync(...args);
      }
    }
    const store = new Watched({ dir: join(dir, 'kept-talk') });
    const release = holdLockOf(store, 'talk');
    let settled = false;
    const asking = chatModel(client, 'local/echo')
      .conversation({ store, id: 'talk' })
      .prompt('remember 4711')
      .finally(() => (settled = true));
    // Before: prompt() called the blocking save(), which waited out its 10 s and failed (FileLockTimeout).
    expect(await Promise.race([inSave, asking.then(() => 'settled', () => 'settled')])).toBe('in save');
    await aTimerRuns();
    expect(settled).toBe(false);
    release();
    expect((await asking).text).toBe('remember 4711');
    expect(store.load('talk').messages.map((m) => m.content)).toEqual(['remember 4711', 'remember 4711']);
  });

  // A program that keeps conversations gets this failure from saveAsync, save and prompt (and runJob
  // from its jobs' lock): before, its class was in no entry point, so a program could not tell it
  // apart but by its name. The wait is the store's own 10 s: the lock is let go only after.
  it('a lock held past the wait is a FileLockTimeout the program imports, with a code', async () => {
    const store = new ConversationStore({ dir: join(dir, 'held') });
    const turn: ChatMessage[] = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }];
    const now = new Date().toISOString();
    const record: ConversationRecord = { id: 'held', title: 'hi', model: 'local/echo', created_at: now, updated_at: now, messages: turn };
    const release = holdLockOf(store, 'held');
    try {
      const err = await store.saveAsync(record, undefined, turn).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(FileLockTimeout);
      expect(err).toBeInstanceOf(batch.FileLockTimeout);
      expect(err).toMatchObject({ name: 'FileLockTimeout', code: 'lock_timeout' });
      expect((err as Error).message).toContain('held.json');
    } finally {
      release();
    }
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { whenAborted } from '../../src/internal/abort-fanout.js';

// Errors thrown by abort listeners reach the process as uncaught exceptions (node's EventTarget
// throws them on the next tick): this test takes them itself while it runs, and gives vitest back its own.
let saved: NodeJS.UncaughtExceptionListener[] = [];
function catchUncaught(): { errors: unknown[]; next: (n: number) => Promise<void> } {
  saved = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const errors: unknown[] = [];
  const waiters: (() => void)[] = [];
  process.on('uncaughtException', (err) => {
    errors.push(err);
    for (const w of waiters.splice(0)) w();
  });
  const next = async (n: number) => {
    while (errors.length < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { errors, next };
}
afterEach(() => {
  process.removeAllListeners('uncaughtException');
  for (const l of saved) process.on('uncaughtException', l);
  saved = [];
});

describe('whenAborted', () => {
  it('runs every call of a signal when one throws, and the error still reaches the process', async () => {
    const caught = catchUncaught();
    const c = new AbortController();
    const ran: string[] = [];
    whenAborted(c.signal, () => ran.push('first'));
    whenAborted(c.signal, () => {
      throw new Error('second broke');
    });
    whenAborted(c.signal, () => ran.push('third'));
    c.abort();
    expect(ran).toEqual(['first', 'third']);
    await caught.next(1);
    expect(caught.errors.map((e) => (e as Error).message)).toEqual(['second broke']);
  });

  it('reports each of several errors, none swallowed', async () => {
    const caught = catchUncaught();
    const c = new AbortController();
    const ran: string[] = [];
    whenAborted(c.signal, () => {
      throw new Error('one');
    });
    whenAborted(c.signal, () => {
      throw new Error('two');
    });
    whenAborted(c.signal, () => ran.push('last'));
    c.abort();
    expect(ran).toEqual(['last']);
    await caught.next(2);
    expect(caught.errors.map((e) => (e as Error).message).sort()).toEqual(['one', 'two']);
  });
});

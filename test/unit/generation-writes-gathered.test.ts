import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ChargedGenerations } from '../../src/emulator/state/charged-generations.js';
import { GATHER_MS, GenerationFile } from '../../src/emulator/state/generation-file.js';
import { CallsAndBatches, KEEP } from '../../src/emulator/state/generation-log.js';

const dir = mkdtempSync(join(tmpdir(), 'router-generation-writes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

const kept = (n: number) => ({ workspace: 'default', data: { id: `gen-${n}`, total_cost: n } });

describe("charged generations' records", () => {
  // At 500 streamed requests/s, a write each turn woke one of libuv's threads, then the loop, about every
  // other request: one context switch more a request, ~100 µs more CPU (both gateways by turns).
  it('kept on turns of the event loop within GATHER_MS go to the file in one write, none before, all found after a restart', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    const folder = mkdtempSync(join(dir, 'gathered-'));
    const calls = new GenerationFile(folder);
    const charged = new ChargedGenerations(new CallsAndBatches(calls, new GenerationFile(folder, KEEP, 'batch-generations')), () => {});
    for (let n = 1; n <= 5; n++) {
      charged.charged(`gen-${n}`, 'default', 0.001, undefined, Date.now(), { m: 'bench/lorem', p: 'up' });
      charged.keep(`gen-${n}`, kept(n));
      // Each record on a turn of its own, all kept within GATHER_MS of the first.
      await vi.advanceTimersByTimeAsync(Math.floor((GATHER_MS - 1) / 5));
    }
    // Before: the first turn's end began a write, and those kept meanwhile went in the next.
    expect(calls.writes).toBe(0);
    expect(charged.get('gen-3')).toEqual(kept(3));
    expect(charged.unrecorded()).toHaveProperty('gen-5');
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(calls.writes).toBe(1);
    await charged.written();
    // A bounded wait, not runAllTimersAsync(): workers are shared between files (isolate: false), and a
    // timer that re-arms itself (undici's clock while an earlier file's sockets live) would never run out.
    await vi.advanceTimersByTimeAsync(GATHER_MS * 5);
    expect(calls.writes).toBe(1);
    expect(charged.unrecorded()).toBeUndefined();
    expect(readFileSync(join(folder, 'generations.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['gen-1', 'gen-2', 'gen-3', 'gen-4', 'gen-5']);
    charged.end();
    const again = new GenerationFile(folder);
    expect([1, 5].map((n) => again.get(`gen-${n}`))).toEqual([kept(1), kept(5)]);
    again.end();
  });
});

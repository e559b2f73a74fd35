import { describe, expect, it } from 'vitest';
import { Measures } from '../../src/emulator/routing/measures.js';

// The window the latency and throughput sorts read (routing/measures.ts): bounded in count and in age, so memory
// stays flat and a provider measured long ago is measured anew (unmeasured ones are asked first).
describe('Measures', () => {
  it('keeps the last 100 samples of a (provider, model)', () => {
    const m = new Measures(() => 0);
    m.failed('a', 'test/m');
    for (let i = 0; i < 100; i++) m.answered('a', 'test/m', 1, 10, 1);
    expect(m.of('a', 'test/m')).toEqual({ latency: { p50: 1, p75: 1, p90: 1, p99: 1 }, throughput: { p50: 10, p75: 10, p90: 10, p99: 10 } });
    expect(m.of('b', 'test/m')).toBeUndefined();
  });

  it('forgets samples older than 5 minutes: the provider is unmeasured again', () => {
    let now = 0;
    const m = new Measures(() => now);
    m.answered('a', 'test/m', 2, undefined, 2);
    now = 60_000;
    m.answered('a', 'test/m', 4, undefined, 4);
    expect(m.of('a', 'test/m')).toEqual({ latency: { p50: 2, p75: 4, p90: 4, p99: 4 } });
    now = 5 * 60_000 + 1;
    expect(m.of('a', 'test/m')?.latency.p50).toBe(4);
    now = 6 * 60_000 + 1;
    expect(m.of('a', 'test/m')).toBeUndefined();
  });
});

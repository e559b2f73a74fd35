import { describe, expect, it } from 'vitest';
import { Measures, Timing } from '../../src/emulator/routing/measures.js';

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

  it('keeps the last 100 once it wraps, and lets the too old go in any place the ring has them', () => {
    let now = 0;
    const m = new Measures(() => now);
    for (let i = 0; i < 150; i++) {
      now = i * 1000;
      m.answered('a', 'test/m', i, undefined, 1);
    }
    expect(m.of('a', 'test/m')?.latency).toEqual({ p50: 99, p75: 124, p90: 139, p99: 148 });
    // Those before 100 s too old: 100 to 149 left, then 30 more after them (the window not full: 80).
    now = 100_000 + 5 * 60_000;
    expect(m.of('a', 'test/m')?.latency).toEqual({ p50: 124, p75: 137, p90: 144, p99: 149 });
    for (let i = 0; i < 30; i++) m.answered('a', 'test/m', 1000 + i, undefined, 1);
    expect(m.of('a', 'test/m')?.latency).toEqual({ p50: 139, p75: 1009, p90: 1021, p99: 1029 });
    for (let i = 0; i < 40; i++) m.answered('a', 'test/m', 2000 + i, undefined, 1);
    expect(m.of('a', 'test/m')?.latency).toEqual({ p50: 1019, p75: 2014, p90: 2029, p99: 2038 });
  });

  it('counts an attempt at an unmeasured provider until it ends, once, however it ends', () => {
    const m = new Measures(() => 0);
    const ends: ((t: Timing) => void)[] = [(t) => t.failed(), (t) => t.whole({ completion_tokens: 1 }), (t) => t.relayed({}), (t) => t.end()];
    for (const end of ends) {
      const t = new Timing(m, `p${ends.indexOf(end)}`, 'test/m');
      expect(m.beingExplored(`p${ends.indexOf(end)}`, 'test/m')).toBe(true);
      end(t);
      t.end();
      expect(m.beingExplored(`p${ends.indexOf(end)}`, 'test/m')).toBe(false);
    }
    // A claim never given back is dropped by the next sample.
    new Timing(m, 'lost', 'test/m');
    m.answered('lost', 'test/m', 1, 1, 1);
    expect(m.beingExplored('lost', 'test/m')).toBe(false);
    // Measured: an attempt there explores nothing.
    m.answered('a', 'test/m', 1, 1, 1);
    new Timing(m, 'a', 'test/m');
    expect(m.beingExplored('a', 'test/m')).toBe(false);
  });

  it("shows the answers' percentiles alone: a failure has no latency", () => {
    const m = new Measures(() => 0);
    m.failed('a', 'test/m');
    expect(m.shown('a', 'test/m')).toBeUndefined();
    m.answered('a', 'test/m', 2, 4, 1);
    expect(m.of('a', 'test/m')?.latency.p99).toBe(Infinity);
    expect(m.shown('a', 'test/m')).toEqual({ latency: { p50: 2, p75: 2, p90: 2, p99: 2 }, throughput: { p50: 4, p75: 4, p90: 4, p99: 4 } });
  });
});

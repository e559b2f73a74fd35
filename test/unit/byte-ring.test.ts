import { describe, expect, it } from 'vitest';
import { ByteRing } from '../../src/emulator/state/byte-ring.js';

describe('a ring of bytes', () => {
  it('gives back every text still wanted, as it was, across wraps and growth', () => {
    const ring = new ByteRing(64);
    const kept: [number, number, string][] = [];
    for (let i = 0; i < 1_000; i++) {
      const text = `${i}:${'é✓x'.repeat((i * 31) % 50)}`;
      const length = Buffer.byteLength(text);
      kept.push([i % 3 ? ring.put(text, length) : ring.putBytes(Buffer.from(text)), length, text]);
      // The newest 20 are wanted, some of them longer than the ring was at first.
      if (kept.length > 20) {
        kept.shift();
        ring.release(kept[0]![0]);
      }
      for (const [at, n, t] of kept) expect(ring.text(at, n)).toBe(t);
    }
  });

  it('writes over what is no longer wanted rather than grow', () => {
    const ring = new ByteRing(16);
    for (let i = 0; i < 1_000; i++) {
      const at = ring.put('abcdefgh', 8);
      expect(ring.text(at, 8)).toBe('abcdefgh');
      ring.release(at);
    }
    expect((ring as unknown as { size: number }).size).toBe(16);
  });
  it('keeps a text longer than the ring whole, wherever the ring had got to', () => {
    const ring = new ByteRing(64);
    ring.release(ring.put('a'.repeat(60), 60));
    const long = 'b'.repeat(100);
    const at = ring.put(long, 100);
    expect(ring.text(at, 100)).toBe(long);
    ring.release(at + 100);
    const bytes = Buffer.from('c'.repeat(300));
    expect(ring.text(ring.putBytes(bytes), 300)).toBe(bytes.toString());
  });

  it('gives back texts of any length as they were, the oldest let go at random', () => {
    let seed = 1;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let round = 0; round < 100; round++) {
      const ring = new ByteRing(64);
      const kept: [number, string][] = [];
      for (let i = 0; i < 60; i++) {
        const text = String.fromCharCode(97 + (i % 26)).repeat(random(5) ? random(40) : random(300));
        kept.push([ring.put(text, text.length), text]);
        while (kept.length > 1 + random(4)) kept.shift();
        ring.release(kept[0]![0]);
        for (const [at, t] of kept) expect(ring.text(at, t.length)).toBe(t);
      }
    }
  });
});

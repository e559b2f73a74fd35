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

  // A burst of large texts (a few large streamed answers kept by the request log) grew the ring for good:
  // its memory never came back. It shrinks once what is wanted fits a quarter of a smaller size.
  it('gives its memory back after a burst of large texts, every wanted text intact', () => {
    const ring = new ByteRing(64);
    const kept: [number, string][] = [];
    const keep = (text: string, newest: number) => {
      kept.push([ring.put(text, Buffer.byteLength(text)), text]);
      while (kept.length > newest) kept.shift();
      ring.release(kept[0]![0]);
      for (const [at, t] of kept) expect(ring.text(at, Buffer.byteLength(t))).toBe(t);
    };
    for (let i = 0; i < 50; i++) keep(`${i}:${'é'.repeat(5_000)}`, 5);
    expect(ring.capacity).toBeGreaterThanOrEqual(5 * 10_000);
    for (let i = 0; i < 200; i++) keep(`small ${i}`, 5);
    expect(ring.capacity).toBeLessThanOrEqual(512);
    // And grows again for the next burst, then shrinks again.
    for (let i = 0; i < 20; i++) keep('x'.repeat(3_000 + i), 3);
    expect(ring.capacity).toBeGreaterThanOrEqual(9_000);
    for (let i = 0; i < 200; i++) keep(`small ${i}`, 5);
    expect(ring.capacity).toBeLessThanOrEqual(512);
    ring.clear();
    expect(ring.capacity).toBe(64);
  });

  it('keeps every wanted text through random bursts and lulls, and ends no larger than its lull needs', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let round = 0; round < 40; round++) {
      const ring = new ByteRing(64);
      const kept: [number, string][] = [];
      for (let i = 0; i < 400; i++) {
        const burst = Math.floor(i / 50) % 2 === 0;
        const text = String.fromCharCode(97 + (i % 26)).repeat(burst ? 200 + random(3_000) : 1 + random(30));
        kept.push([ring.put(text, text.length), text]);
        while (kept.length > 1 + random(6)) kept.shift();
        ring.release(kept[0]![0]);
        for (const [at, t] of kept) expect(ring.text(at, t.length)).toBe(t);
      }
      expect(ring.capacity).toBeLessThanOrEqual(1024);
    }
  });
});

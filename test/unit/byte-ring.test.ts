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
});

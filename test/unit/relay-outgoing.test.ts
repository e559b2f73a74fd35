import { describe, expect, it } from 'vitest';
import { Outgoing } from '../../src/emulator/routing/outgoing.js';
import { RelayedTokens } from '../../src/emulator/routing/hang-up.js';

describe('Outgoing: what a relay still has to write, as UTF-8 bytes', () => {
  it('gives back every piece added, byte for byte, across takes and growth, and never changes bytes given out', () => {
    const tokens = new RelayedTokens();
    const out = new Outgoing(': ROUTER PROCESSING\n\n', tokens);
    const pieces = ['data: ', '{"content":"caf\u00e9 \ud83d\ude00"}', '\n\n', 'x'.repeat(10_000), '\u4e2d\u6587', '', 'data: [DONE]\n\n'];
    let all = ': ROUTER PROCESSING\n\n';
    const given: { bytes: Buffer; copy: Buffer }[] = [];
    for (let round = 0; round < 40; round++) {
      for (const [i, piece] of pieces.slice(0, (round % pieces.length) + 1).entries()) {
        // Every other piece as bytes: a slice of a larger read, as frameBytesTo copies them.
        if ((round + i) % 2) {
          const read = Buffer.from(`<${piece}>`);
          out.addBytes(read, 1, read.length - 1);
        } else out.add(piece);
        all += piece;
      }
      const bytes = round % 3 ? out.take() : undefined;
      if (bytes) given.push({ bytes, copy: Buffer.from(bytes) });
    }
    const rest = out.rest();
    if (rest) given.push({ bytes: rest, copy: Buffer.from(rest) });
    expect(Buffer.concat(given.map((g) => g.bytes)).equals(Buffer.from(all))).toBe(true);
    for (const g of given) expect(g.bytes.equals(g.copy)).toBe(true);
    expect(out.take()).toBeUndefined();
  });

  it('counts the tokens counted so far as sent when it gives them out, not before', () => {
    const tokens = new RelayedTokens();
    const out = new Outgoing('', tokens);
    tokens.add('three more words');
    out.add('data: three more words\n\n');
    expect(tokens.sent).toBe(0);
    expect(out.take()?.toString()).toBe('data: three more words\n\n');
    expect(tokens.sent).toBeGreaterThan(0);
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SseSplitter } from '../../src/emulator/providers/sse.js';
import { writeFileAtomicLater } from '../../src/emulator/state/fsutil.js';

/** The payloads of `pieces` pushed in turn into one splitter (`out` gets them as they complete). */
function payloads(pieces: (string | Buffer)[], maxEvent?: number, out: string[] = []): string[] {
  const splitter = new SseSplitter(maxEvent);
  for (const p of pieces) splitter.push(p, (data) => out.push(data));
  return out;
}

/** payloads() with every other event offered as bytes taken there (decoded by the test, in its place). */
function payloadsTaking(pieces: Buffer[]): string[] {
  const splitter = new SseSplitter();
  const out: string[] = [];
  let offered = 0;
  const bytes = (piece: Buffer, start: number, end: number) => offered++ % 2 === 0 && out.push(piece.toString('utf8', start, end)) > 0;
  for (const p of pieces) splitter.push(p, (data) => out.push(data), bytes);
  return out;
}

describe('the gateway reading an upstream event stream', () => {
  it('decodes a character whose bytes two reads split', async () => {
    const bytes = Buffer.from('data: {"c":"héllo 🙂"}\n\n');
    const at = bytes.indexOf(Buffer.from('🙂')) + 2;
    expect(await payloads([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(['{"c":"héllo 🙂"}']);
  });

  it('decodes characters split between reads after whole ones, and drops a BOM only at the start', async () => {
    const text = '\uFEFFdata: {"c":"a"}\n\ndata: {"c":"héllo 🙂 ж"}\n\ndata: {"c":"\uFEFF€"}\n\ndata: [DONE]\n\n';
    const bytes = Buffer.from(text);
    const whole = payloads([bytes]);
    expect(whole).toEqual(['{"c":"a"}', '{"c":"héllo 🙂 ж"}', '{"c":"\uFEFF€"}', '[DONE]']);
    // Every cut into two, and into pieces of 1 to 7 bytes: the same payloads.
    for (let at = 0; at <= bytes.length; at++) expect(payloads([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(whole);
    for (let size = 1; size <= 7; size++) {
      const pieces: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
      expect(payloads(pieces)).toEqual(whole);
    }
  });

  it('takes \\r\\n line ends, a pair split between reads too, without seeing an event end there', async () => {
    expect(await payloads(['data: a\r', '\ndata: b\r\n\r', '\n: comment\r\n\r\ndata: c\r\n\r\n'])).toEqual(['a\nb', 'c']);
  });

  it('gives an event its lone \\r ends at once, not when the next read comes (a \\n after it dropped)', () => {
    const splitter = new SseSplitter();
    const out: string[] = [];
    for (const piece of ['data: a\r\r', '\ndata: b\r', '\r', 'data: [DONE]\r\r']) {
      splitter.push(piece, (data) => out.push(data));
      out.push('|');
    }
    expect(out).toEqual(['a', '|', '|', 'b', '|', '[DONE]', '|']);
  });

  it('takes an event over many reads, its blank line split between two of them', async () => {
    expect(await payloads(['data: {"a', '":"long', '"}\n', '\ndata: [DO', 'NE]\n', '\r\n'])).toEqual(['{"a":"long"}', '[DONE]']);
  });

  it('gives the events before one larger than its bound, then throws', async () => {
    const piece = 'a'.repeat(64 * 1024);
    const pieces = ['data: 1\n\ndata: "', ...Array.from<string>({ length: 300 }).fill(piece)];
    const out: string[] = [];
    expect(() => payloads(pieces, 16 * 1024 * 1024, out)).toThrow('an event larger than 16777216 characters');
    expect(out).toEqual(['1']);
  });

  it('gives what one TextDecoder over the whole stream gives, for any bytes cut anywhere (seeded random)', () => {
    // The fast path (Buffer's decoder for a piece ending in ASCII) against the plain one, with invalid
    // UTF-8, BOMs, characters and \r\n cut between pieces.
    let seed = 43;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const atoms = ['data: ', '\n\n', '\r\n', '\r', '\n', 'é', '🙂', '€', '\uFEFF', 'ab'].map((t) => Buffer.from(t));
    atoms.push(...[[0xff], [0xe2], [0xe2, 0x82], [0xf0, 0x9f], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]].map((b) => Buffer.from(b)));
    for (let t = 0; t < 3000; t++) {
      const parts = Array.from({ length: 1 + rnd(30) }, () => (rnd(10) < 3 ? Buffer.from([rnd(256)]) : atoms[rnd(atoms.length)]!));
      const bytes = Buffer.concat([...parts, Buffer.from('\n\n')]);
      const pieces: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + rnd(6);
        pieces.push(bytes.subarray(at, at + size));
        at += size;
      }
      const whole = payloads([new TextDecoder().decode(bytes)]);
      expect(payloads(pieces), JSON.stringify([...bytes])).toEqual(whole);
      expect(payloadsTaking(pieces), JSON.stringify([...bytes])).toEqual(whole);
      expect(payloadsTaking([bytes]), JSON.stringify([...bytes])).toEqual(whole);
    }
  });

  it('offers one-line data events a read holds whole as bytes, in order with those it decodes', () => {
    const splitter = new SseSplitter();
    const seen: string[] = [];
    const bytes = (piece: Buffer, start: number, end: number) => {
      const data = piece.toString('utf8', start, end);
      return data.startsWith('{') && seen.push(`bytes ${data}`) > 0;
    };
    const push = (text: string) => splitter.push(Buffer.from(text), (data) => seen.push(`text ${data}`), bytes);
    // The first read is decoded whole (a BOM to drop); so is one with a \r, and an event begun in a read before.
    push('\uFEFFdata: {"a":1}\n\n');
    push('data: {"b":"é"}\n\ndata: [DONE]\n\n: ping\n\ndata: {"c"');
    push(':2}\n\ndata: {"d":3}\n\nevent: x\ndata: {"e":4}\n\n');
    push('data: {"f":5}\r\n\r\ndata: {"g":6}\n\n');
    expect(seen).toEqual(['text {"a":1}', 'bytes {"b":"é"}', 'text [DONE]', 'text {"c":2}', 'text {"d":3}', 'text {"e":4}', 'text {"f":5}', 'text {"g":6}']);
  });

  it('joins the data lines of one event, and skips events with none', async () => {
    expect(await payloads(['event: x\ndata: 1\ndata:2\n\nevent: y\n\ndata: [DONE]\n\n'])).toEqual(['1\n2', '[DONE]']);
  });
});

describe('a state save off the event loop', () => {
  it('says when a write made during its rename may lie under it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-later-'));
    try {
      const file = join(dir, 'state.json');
      expect(await writeFileAtomicLater(file, 'one', () => true)).toBe(false);
      expect(readFileSync(file, 'utf8')).toBe('one');
      // Current when its rename began, stale once it ended (a sync write came between).
      let asked = 0;
      expect(await writeFileAtomicLater(file, 'two', () => asked++ === 0)).toBe(true);
      // Stale before its rename: dropped.
      expect(await writeFileAtomicLater(file, 'three', () => false)).toBe(false);
      expect(readFileSync(file, 'utf8')).toBe('two');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSSE } from '../../src/client/sse.js';
import { cutAt } from '../support/cut.js';

async function collect(chunks: (string | Uint8Array)[]) {
  const out = [];
  for await (const ev of parseSSE((async function* () { yield* chunks; })())) out.push(ev);
  return out;
}

describe('parseSSE', () => {
  it('parses data, event and id fields and skips comments', async () => {
    const evs = await collect([': keep-alive\n\nevent: response.created\ndata: {"a":1}\nid: 7\n\ndata: line1\ndata: line2\n\n']);
    expect(evs).toEqual([
      { event: 'response.created', data: '{"a":1}', id: '7' },
      { event: undefined, data: 'line1\nline2', id: '7' },
    ]);
  });

  it('accepts CRLF and CR line ends', async () => {
    expect(await collect(['data: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toMatchObject([{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
  });

  it('delivers a last event that lacks the blank line', async () => {
    expect(await collect(['data: tail'])).toMatchObject([{ data: 'tail' }]);
  });

  it('yields the same events whatever the chunk boundaries (UTF-8 split, CRLF split)', async () => {
    const event = fc.record({
      data: fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ' ')),
      comment: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 8 }), fc.constantFrom('\n', '\r\n', '\r'), fc.array(fc.nat(), { maxLength: 12 }), async (events, eol, cuts) => {
        const text = events.map((e) => `${e.comment ? `: ping${eol}` : ''}data: ${e.data}${eol}${eol}`).join('');
        const chunks = cutAt(new TextEncoder().encode(text), cuts);
        const got = await collect(chunks);
        expect(got.map((g) => g.data)).toEqual(events.map((e) => e.data));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes any bytes cut anywhere as TextDecoder decodes them whole: invalid bytes, a leading byte order mark', async () => {
    const piece = fc.oneof(fc.constantFrom('data: ', '\n', '\n\n', '\uFEFF', 'é', '€', '😀'), fc.string({ unit: 'grapheme', maxLength: 4 }));
    const bytes = fc.array(fc.oneof(piece.map((s) => [...Buffer.from(s)]), fc.array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 3 })), { maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(bytes, fc.array(fc.nat(), { maxLength: 8 }), async (parts, cuts) => {
        const whole = new Uint8Array([...parts.flat(), 0x0a, 0x0a]);
        const expected = await collect([new TextDecoder().decode(whole)]);
        expect(await collect(cutAt(whole, cuts))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('replaces invalid UTF-8 instead of throwing', async () => {
    const evs = await collect([new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a, 0x0a])]);
    expect(evs).toEqual([{ event: undefined, data: '\uFFFD\uFFFD', id: undefined }]);
  });
});

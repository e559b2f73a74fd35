import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { newConversationRecord } from '../../src/kit/conversation-store.js';
import { jsonPieces, writeJsonLine } from '../../src/internal/json-pieces.js';
import { jsonByteLength } from '../../src/internal/json-byte-length.js';
import { writeWhole } from '../../src/internal/write-whole.js';

// A conversation started by a very large prompt (task c8): kept without copies of it many times over.

it('a title is the first words, spaces made one, as the whole text with every run of white space replaced would give', () => {
  const texts = ['', '   ', 'one', '  two  words  ', '\n\ttabs\u00a0and\u2028lines\r\n', 'x'.repeat(60), `${'a '.repeat(29)}ab`, `  ${'word '.repeat(12)}`];
  for (const text of texts) expect(newConversationRecord('m', text).title, JSON.stringify(text)).toBe(text.replace(/\s+/g, ' ').trim());
});

it('a title cut shows it: 60 characters at most, the last "…", never half an emoji', () => {
  const cases: [string, string][] = [
    ['x'.repeat(100), `${'x'.repeat(59)}…`],
    ['x'.repeat(61), `${'x'.repeat(59)}…`],
    [`${'a '.repeat(40)}end`, `${'a '.repeat(29)}a…`],
    [`${'x'.repeat(58)} yy`, `${'x'.repeat(58)}…`],
    [`${'x'.repeat(60)} more`, `${'x'.repeat(59)}…`],
    [`${'é'.repeat(58)}😀 tail`, `${'é'.repeat(58)}…`],
    [`${'w'.repeat(59)} 😀`, `${'w'.repeat(59)}…`],
  ];
  for (const [text, title] of cases) {
    const got = newConversationRecord('m', text).title;
    expect(got, JSON.stringify(text)).toBe(title);
    expect(got.length).toBeLessThanOrEqual(60);
  }
});

/** Saves a new conversation of `words` repeated `times` in a child whose heap is `heapMb`; its exit status and file. */
function saveInSmallHeap(heapMb: number, words: string, times: number) {
  const dir = mkdtempSync(join(tmpdir(), 'router-c8-large-'));
  const store = JSON.stringify(join(import.meta.dirname, '../../src/kit/conversation-store.ts'));
  const script = `import(${store}).then(({ ConversationStore, newConversationRecord }) => {
    const text = ${JSON.stringify(words)}.repeat(${times});
    const c = newConversationRecord('m', text, 'large');
    c.messages = [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }];
    new ConversationStore({ dir: ${JSON.stringify(dir)} }).save(c, undefined, c.messages);
  })`;
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
  return readFileSync(join(dir, 'large.json'), 'utf8');
}

it('a conversation of a 20 MB prompt is titled and kept within a 48 MB heap', () => {
  // Was: out of memory titling it (the whole text copied with a part per white space: ~370 MB more), even with 200 MB.
  const kept = JSON.parse(saveInSmallHeap(48, 'lorem ipsum dolor sit amet ', 800000));
  expect(kept.title).toBe(`${'lorem ipsum dolor sit amet '.repeat(3).slice(0, 59)}…`);
  expect(kept.messages[0].content).toHaveLength(27 * 800000);
});

it('a conversation of a 40 MB prompt is written in pieces within a 64 MB heap', () => {
  const words = 'say "\\" é\n\t now ';
  // Was: out of memory (the JSON text whole, joined with its newline, then its bytes).
  const kept = JSON.parse(saveInSmallHeap(64, words, 2_400_000));
  expect(kept.messages[0].content).toBe(words.repeat(2_400_000));
});

it('what is written in pieces is the bytes JSON.stringify gives, escapes and surrogate pairs across the pieces too', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-c8-pieces-'));
  const long = (unit: string) => unit.repeat(Math.ceil((1 << 20) / unit.length) + 3);
  const values: unknown[] = [
    { a: undefined, b: () => 1, c: [undefined, () => 1, null, 1.5, true, 'x'], d: new Date(0), e: { toJSON: () => 'j' }, '"é"': 'ü\n\t\u0001😀' },
    [], {}, 'text', 3, null, long('lorem '), long('é😀"\\\n'), `${long('a')}\ud800`, `${'a'.repeat((1 << 20) - 1)}😀${long('b')}`, { messages: [{ role: 'user', content: long('x"') }] },
  ];
  values.forEach((value, i) => {
    const file = join(dir, `${i}.json`);
    writeWhole(file, (fd) => writeJsonLine(fd, value));
    expect(readFileSync(file, 'utf8'), String(i)).toBe(`${JSON.stringify(value)}\n`);
    // A request's body in pieces (src/client/core.ts): the same bytes, as many as its content-length says.
    const sent = Buffer.concat([...jsonPieces(value)]);
    expect(sent.toString('utf8'), String(i)).toBe(JSON.stringify(value) ?? '');
    expect(jsonByteLength(value), String(i)).toBe(sent.length);
  });
});

import { describe, expect, it } from 'vitest';
import { PendingLines } from '../../src/emulator/state/pending-lines.js';
import type { KeptGeneration } from '../../src/emulator/state/store-api.js';

const line = (id: string, kept: KeptGeneration) => JSON.stringify({ id, workspace: kept.workspace, key: kept.key, data: kept.data, batch: kept.batch });

describe('generation lines', () => {
  const records: [string, KeptGeneration][] = [
    ['gen-1', { workspace: 'default', key: 'k1', data: { id: 'gen-1', total_cost: 0.25, streamed: true, finish_reason: null, note: 'é – 😀 "quoted" \\ \n\t\u2028', gone: undefined, nested: { a: [1, 'b', null] }, huge: 1e21, nan: NaN, inf: -Infinity, zero: -0, small: 1.5e-7, when: new Date(0), fn: () => 1, lone: 'a\ud800b', pair: '😀', ctl: '\u0001<>&', no: false } }],
    ['gen-2', { workspace: 'w', data: { id: 'gen-2' }, batch: 'batch_1' }],
    ['gen-3', { workspace: 'w', data: {} }],
    ['gen-4', { workspace: 'w', data: { toJSON: () => ({ as: 'json' }) } as unknown as Record<string, unknown> }],
  ];

  it('are the bytes of JSON.stringify of the whole record, each with its newline, where it starts', () => {
    const lines = new PendingLines(16);
    for (const [id, kept] of records) lines.add(id, kept);
    const out = lines.take(false);
    const expected = records.map(([id, kept]) => `${line(id, kept)}\n`).join('');
    expect(out.bytes.toString('utf8', 0, out.used)).toBe(expected);
    expect(out.starts).toEqual(records.map((_, i) => Buffer.byteLength(expected.split('\n').slice(0, i).map((l) => `${l}\n`).join(''))));
    for (const [id, kept] of records) expect(lines.get(id)).toBe(line(id, kept));
    // After a line cut short: a newline first, every start one on.
    const torn = lines.take(true);
    expect(torn.bytes.toString('utf8', 0, torn.used)).toBe(`\n${expected}`);
    expect(torn.starts).toEqual(out.starts.map((at) => at + 1));
  });

  it('a generation kept twice is one line, its newest, last', () => {
    const lines = new PendingLines();
    lines.add('gen-1', records[0]![1]);
    lines.add('gen-2', records[1]![1]);
    lines.add('gen-1', records[2]![1]);
    const out = lines.take(false);
    expect(out.bytes.toString('utf8', 0, out.used)).toBe(`${line('gen-2', records[1]![1])}\n${line('gen-1', records[2]![1])}\n`);
    expect([...lines.ids()]).toEqual(['gen-2', 'gen-1']);
  });

  it('a record with no JSON is refused, and nothing of it is kept', () => {
    const lines = new PendingLines();
    lines.add('gen-1', records[1]![1]);
    expect(() => lines.add('gen-2', { workspace: 'w', data: { n: 1n } as unknown as Record<string, unknown> })).toThrow(TypeError);
    const out = lines.take(false);
    expect(out.bytes.toString('utf8', 0, out.used)).toBe(`${line('gen-1', records[1]![1])}\n`);
    expect(lines.size).toBe(1);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Collections, contentHash } from '../../src/kit/collections/store.js';
import { similarTo, similarToId } from '../../src/kit/collections/similar.js';
import { itemsFromText, globTest } from '../../src/kit/collections/items.js';

const STORE = JSON.stringify(join(import.meta.dirname, '../../src/kit/collections/store.ts'));
/** The vector of entry k: readable back as k, so that a row written under another entry's name shows; long, so that writes take a while. */
const DIM = 4096;
const vectorOf = (k: number) => [k, k + 1, k + 2, ...new Array<number>(DIM - 3).fill(1)];

/**
 * A child that adds entries `from`..`from+count` to collection `c` under `dir`, one write each (`count` 0: forever);
 * `onGo`: it says "ready" and starts once told to, so that two start together.
 */
function writer(dir: string, from: number, count: number, onGo = false): string {
  return `import(${STORE}).then(async ({ Collections }) => {
    const c = new Collections({ dir: ${JSON.stringify(dir)} }).open('c');
    if (${onGo}) {
      console.log('ready');
      await new Promise((go) => process.stdin.once('data', go));
      process.stdin.pause();
    }
    for (let k = ${from}; ${count} === 0 || k < ${from + count}; k++) {
      await c.add('local/embed', null, [{ id: 'e' + k, hash: 'h' + k, vector: [k, k + 1, k + 2, ...new Array(${DIM} - 3).fill(1)], content: 'text ' + k }]);
    }
  })`;
}

function checkAll(dir: string): Map<string, { row: number }> {
  const c = new Collections({ dir }).open('c');
  const { entries } = c.entries();
  const rows = c.vectors();
  for (const [id, e] of entries) {
    const k = Number(id.slice(1));
    expect([...rows.subarray(e.row * DIM, e.row * DIM + DIM)], id).toEqual(vectorOf(k));
    expect(e.hash).toBe(`h${k}`);
  }
  return entries;
}

it('two processes writing the same collection at once lose nothing: every entry names its own vector', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-coll-'));
  const children = [0, 1000].map((from) => spawn(process.execPath, ['--import', 'tsx', '-e', writer(dir, from, 150, true)], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const exits = children.map((p) => new Promise<number | null>((done) => p.on('exit', done)));
  await Promise.all(children.map((p) => new Promise((ready) => p.stdout.once('data', ready))));
  for (const p of children) p.stdin.end('go\n');
  expect(await Promise.all(exits)).toEqual([0, 0]);
  const entries = checkAll(dir);
  expect(entries.size).toBe(300);
  expect(new Set([...entries.values()].map((e) => e.row)).size).toBe(300);
});

it('a writer killed (-9) mid-run loses at most the write under way; the next write goes on cleanly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-coll-kill-'));
  const p = spawn(process.execPath, ['--import', 'tsx', '-e', writer(dir, 0, 0)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const index = join(dir, 'c', 'index.jsonl');
  // Killed once it has kept some entries (checked as they are written, no fixed wait).
  await new Promise<void>((resolve) => {
    const look = setInterval(() => {
      let text: string;
      try {
        text = readFileSync(index, 'utf8');
      } catch {
        return;
      }
      if (text.split('\n').length <= 30) return;
      clearInterval(look);
      resolve();
    }, 5);
  });
  p.kill('SIGKILL');
  await new Promise((r) => p.on('exit', r));
  const before = checkAll(dir);
  expect(before.size).toBeGreaterThan(29);
  // What a kill can leave at worst: half a row, and a torn line.
  appendFileSync(join(dir, 'c', 'vectors.f32'), Buffer.alloc(6, 0xff));
  appendFileSync(index, '{"id":"torn","hash":"x","ro');
  const c = new Collections({ dir }).open('c');
  expect(c.entries().damaged).toBe(1);
  await c.add('local/embed', null, [{ id: 'e5000', hash: 'h5000', vector: vectorOf(5000) }]);
  const after = checkAll(dir);
  expect(after.size).toBe(before.size + 1);
  expect(after.get('e5000')).toBeDefined();
  expect(new Collections({ dir }).open('c').entries().damaged).toBe(1);
});

it('keeps the model and the vector length of its first entry; refuses others', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-coll-model-'));
  const c = new Collections({ dir }).open('c');
  await c.add('local/embed', null, [{ id: 'a', hash: contentHash('a'), vector: [1, 0] }]);
  await expect(c.add('other/model', null, [{ id: 'b', hash: 'x', vector: [1, 0] }])).rejects.toMatchObject({ code: 'model_mismatch', model: 'local/embed' });
  await expect(c.add('local/embed', null, [{ id: 'b', hash: 'x', vector: [1, 0, 0] }])).rejects.toMatchObject({ code: 'length_mismatch' });
  expect(c.entries().entries.size).toBe(1);
  expect(new Collections({ dir }).list()).toMatchObject([{ name: 'c', model: 'local/embed', length: 2, count: 1 }]);
});

it('ranks by cosine similarity: the same direction first, its score 1; --id leaves the entry out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-coll-sim-'));
  const c = new Collections({ dir }).open('c');
  await c.add('m', null, [
    { id: 'x', hash: '1', vector: [1, 0, 0] },
    { id: 'near', hash: '2', vector: [0.9, 0.1, 0], metadata: { n: 1 } },
    { id: 'far', hash: '3', vector: [-1, 0, 0], content: 'away' },
  ]);
  const hits = similarTo(c, [2, 0, 0]);
  expect(hits.map((h) => h.id)).toEqual(['x', 'near', 'far']);
  expect(hits[0]!.score).toBeCloseTo(1, 6);
  expect(hits[2]).toEqual({ id: 'far', score: -1, content: 'away', metadata: null });
  expect(similarToId(c, 'x', { number: 1 }).map((h) => h.id)).toEqual(['near']);
  expect(() => similarToId(c, 'nope')).toThrow(expect.objectContaining({ code: 'no_entry' }));
});

it('reads JSONL, JSON, CSV (quoted fields) and TSV items; globs match paths', () => {
  expect(itemsFromText('{"id":"a","content":"A","metadata":{"k":1}}\n\n{"id":2,"title":"T","body":"B"}\n', 'jsonl', 'f', 'c')).toEqual([
    { id: 'a', content: 'A', metadata: { k: 1 } },
    { id: '2', content: 'T B' },
  ]);
  expect(itemsFromText('id,title,body\none,"a, b","say ""hi""\nthere"\ntwo,x,\n', 'csv', 'f', 'c')).toEqual([
    { id: 'one', content: 'a, b say "hi"\nthere' },
    { id: 'two', content: 'x' },
  ]);
  expect(itemsFromText('id\ttext\nk\tv\n', 'tsv', 'f', 'c')).toEqual([{ id: 'k', content: 'v' }]);
  expect(() => itemsFromText('{"content":"no id"}\n', 'jsonl', 'items.jsonl', 'c')).toThrow('items.jsonl line 1: no "id" (a string or a number)');
  const md = globTest('**/*.md');
  expect(['a.md', 'docs/b.md', 'docs/x/c.md'].every(md)).toBe(true);
  expect(md('a.txt')).toBe(false);
  expect(globTest('*.{md,txt}')('a.txt')).toBe(true);
  expect(globTest('*.txt')('sub/a.txt')).toBe(false);
});

it('a child process can import the store (the spawned writers above do)', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import(${STORE}).then((m) => console.log(typeof m.Collections))`], { encoding: 'utf8' });
  expect(r.stdout.trim()).toBe('function');
});

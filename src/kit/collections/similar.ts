/** The entries of a collection nearest a vector, by cosine similarity (a scan of every row, as llm's). */
import { CollectionError } from '../errors.js';
import { checkCounts } from '../checked-options.js';
import type { Collection, CollectionEntry } from './store.js';

export interface SimilarHit {
  id: string;
  score: number;
  content: string | null;
  metadata: Record<string, unknown> | null;
}

export interface SimilarOptions {
  /** How many to return (default 10). */
  number?: number | undefined;
  /** Only ids that start with this. */
  prefix?: string | undefined;
  /** An id to leave out (the one searched by). */
  skipId?: string | undefined;
}

/** The `number` entries most like `vector`, best first (ties by id); `rows`: the collection's vectors, when already read. */
export function similarTo(collection: Collection, vector: ArrayLike<number>, opts: SimilarOptions = {}, rows?: Float32Array): SimilarHit[] {
  // Else -1 gave all but the last, and 0 or NaN none.
  checkCounts('similarTo()', opts, ['number'], 1);
  const meta = collection.meta();
  if (!meta) throw new CollectionError('not_found', collection.name, `no collection ${collection.name}`);
  if (vector.length !== meta.length) throw new CollectionError('length_mismatch', collection.name, `collection ${collection.name} keeps vectors of ${meta.length} numbers, not ${vector.length}`);
  rows ??= collection.vectors();
  const qNorm = Math.sqrt(dot(vector, vector, 0, meta.length));
  const scored: { e: CollectionEntry; score: number }[] = [];
  for (const e of collection.entries().entries.values()) {
    if (e.id === opts.skipId || (opts.prefix && !e.id.startsWith(opts.prefix))) continue;
    const at = e.row * meta.length;
    const row = rows.subarray(at, at + meta.length);
    const norm = Math.sqrt(dot(row, row, 0, meta.length));
    // Clamped: float32 rows give 1.0000000000000009 for the same direction.
    scored.push({ e, score: norm && qNorm ? Math.max(-1, Math.min(1, dot(vector, row, 0, meta.length) / (norm * qNorm))) : 0 });
  }
  scored.sort((a, b) => b.score - a.score || (a.e.id < b.e.id ? -1 : 1));
  return scored.slice(0, opts.number ?? 10).map(({ e, score }) => ({ id: e.id, score, content: e.content ?? null, metadata: e.metadata ?? null }));
}

/** The entries most like the kept entry `id` (itself left out). */
export function similarToId(collection: Collection, id: string, opts: Omit<SimilarOptions, 'skipId'> = {}): SimilarHit[] {
  checkCounts('similarToId()', opts, ['number'], 1);
  const meta = collection.meta();
  if (!meta) throw new CollectionError('not_found', collection.name, `no collection ${collection.name}`);
  const entry = collection.entries().entries.get(id);
  if (!entry) throw new CollectionError('no_entry', collection.name, `collection ${collection.name} has no entry ${JSON.stringify(id)}`);
  const at = entry.row * meta.length;
  const rows = collection.vectors();
  return similarTo(collection, rows.subarray(at, at + meta.length), { ...opts, skipId: id }, rows);
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>, from: number, length: number): number {
  let s = 0;
  for (let i = from; i < length; i++) s += a[i]! * b[i]!;
  return s;
}

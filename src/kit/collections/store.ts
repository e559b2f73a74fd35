/**
 * Embedding collections (llm's): a folder per collection under the state folder's `collections/<profile>`:
 * `collection.json` (its model and vector length, fixed by its first entry), `vectors.f32` (the vectors,
 * little-endian float32, one fixed-size row each) and `index.jsonl` (a line per entry kept: id, content
 * hash, row, and content and metadata when kept; a later line of an id replaces an earlier one).
 * Writers take turns under the index's lock. A write's rows go to the vector file before the lines that
 * name them, so a process killed mid-write loses at most the entries of that write: a row no line names
 * is unused space, a torn line is skipped (and the next write starts on a line of its own).
 */
import { createHash } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, fstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { stateHome } from '../../config/state-dir.js';
import { appendWhole } from '../../internal/append-whole.js';
import { withFileLockAsync } from '../../internal/with-file-lock.js';
import { makeDir } from '../../internal/make-dir.js';
import { isRecord } from '../../internal/shape.js';
import { writeWhole } from '../../internal/write-whole.js';
import { CollectionError } from '../errors.js';

/** What a collection is fixed to by its first entry. */
export interface CollectionMeta {
  name: string;
  model: string;
  /** The dimensions asked of the model (sent with every later request), or null: the model's own. */
  dimensions: number | null;
  /** The length of every vector. */
  length: number;
  created_at: string;
}

export interface CollectionEntry {
  id: string;
  /** md5 of the content, hex: an entry of the same id and hash is not embedded again. */
  hash: string;
  row: number;
  time: string;
  content?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** An entry to write: its vector, or the row of one already kept (new content or metadata, same text). */
export type EntryWrite = Omit<CollectionEntry, 'row' | 'time'> & ({ vector: ArrayLike<number> } | { row: number });

export interface CollectionSummary extends CollectionMeta {
  count: number;
}

export interface CollectionsOptions {
  /** The folder of the collections; default: `collections/<profile>` in the state folder `env` names. */
  dir?: string | undefined;
  /** Where the state folder is found (`ROUTER_STATE_DIR`, `XDG_STATE_HOME`, `HOME`); default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
  /** The profile whose collections these are; default: `default`. */
  profile?: string | undefined;
}

const NAME = /^[\w.-]{1,64}$/;
const MAX_ID = 1024;

export function checkCollectionName(name: string): string {
  if (!NAME.test(name) || name.startsWith('.')) throw new CollectionError('invalid_name', name, `collection name "${name}": use 1 to 64 letters, digits, ".", "_" or "-", not starting with "."`);
  return name;
}

export function checkEntryId(collection: string, id: string): string {
  if (!id.trim() || id.length > MAX_ID) throw new CollectionError('invalid_id', collection, `entry id ${JSON.stringify(id.slice(0, 40))}: give 1 to ${MAX_ID} characters, not blank`);
  return id;
}

/** The content hash an entry keeps (as llm's, md5). */
export function contentHash(content: string): string {
  return createHash('md5').update(content, 'utf8').digest('hex');
}

/** The collections of one profile. */
export class Collections {
  readonly dir: string;

  constructor(opts: CollectionsOptions = {}) {
    this.dir = opts.dir ?? join(stateHome(opts.env ?? process.env), 'collections', opts.profile ?? 'default');
  }

  /** The collection of that name, whether or not it holds anything yet (`CollectionError` `invalid_name`). */
  open(name: string): Collection {
    return new Collection(checkCollectionName(name), join(this.dir, name));
  }

  /**
   * Every collection with an entry, by name. A damaged one (a collection.json that cannot be read) is left out and
   * its file handed to `damaged`; so are entries left out, with their count: the index's torn lines, or the
   * vector file's rows it lacks (cut short).
   */
  list(damaged?: (file: string, lines?: number) => void): CollectionSummary[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => NAME.test(n) && !n.startsWith('.')).sort();
    } catch {
      return [];
    }
    return names.flatMap((n) => {
      const c = this.open(n);
      const meta = c.meta();
      if (!meta) {
        if (existsSync(c.metaPath)) damaged?.(c.metaPath);
        return [];
      }
      const { entries, damaged: lines, unwritten } = c.entries();
      if (lines - unwritten) damaged?.(c.indexPath, lines - unwritten);
      if (unwritten) damaged?.(c.vectorPath, unwritten);
      return [{ ...meta, count: entries.size }];
    });
  }

  /** Removes a collection whole (`not_found` when there is none); a writer under way finishes first. */
  async delete(name: string): Promise<void> {
    const c = this.open(name);
    if (!existsSync(c.dir)) throw new CollectionError('not_found', name, `no collection ${name}`);
    await withFileLockAsync(c.indexPath, () => {
      // Renamed away first: a reader never sees half a collection.
      const gone = join(this.dir, `.deleted-${name}.${process.pid}`);
      renameSync(c.dir, gone);
      rmSync(gone, { recursive: true, force: true });
    });
  }
}

export class Collection {
  constructor(
    readonly name: string,
    readonly dir: string,
  ) {}

  /** Makes its folder, or throws the system's error (a read-only HOME), before anything is sent and paid for. */
  readyToWrite(): void {
    makeDir(this.dir);
    accessSync(this.dir, constants.W_OK);
  }

  get indexPath(): string {
    return join(this.dir, 'index.jsonl');
  }

  get vectorPath(): string {
    return join(this.dir, 'vectors.f32');
  }

  get metaPath(): string {
    return join(this.dir, 'collection.json');
  }

  /** Its model and vector length; undefined before its first entry. */
  meta(): CollectionMeta | undefined {
    let m: unknown;
    try {
      m = JSON.parse(readFileSync(this.metaPath, 'utf8'));
    } catch {
      return undefined;
    }
    return isRecord(m) && typeof m.model === 'string' && typeof m.length === 'number' ? (m as unknown as CollectionMeta) : undefined;
  }

  /** The entries by id (the last line of each), and how many lines were damaged (torn, or naming a row not written). */
  entries(): { entries: Map<string, CollectionEntry>; damaged: number; unwritten: number } {
    const entries = new Map<string, CollectionEntry>();
    let damaged = 0;
    /** Of the damaged: lines whose row the vector file lacks (it was cut short). */
    let unwritten = 0;
    const meta = this.meta();
    let text: string;
    try {
      text = readFileSync(this.indexPath, 'utf8');
    } catch {
      return { entries, damaged, unwritten };
    }
    const rows = meta ? Math.floor(this.vectorBytes() / (meta.length * 4)) : 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      let e: unknown;
      try {
        e = JSON.parse(line);
      } catch {
        damaged++;
        continue;
      }
      if (!isRecord(e) || typeof e.id !== 'string' || typeof e.hash !== 'string' || !Number.isInteger(e.row) || (e.row as number) < 0 || (e.row as number) >= rows) {
        damaged++;
        if (isRecord(e) && Number.isInteger(e.row) && (e.row as number) >= rows) unwritten++;
        continue;
      }
      entries.set(e.id, e as unknown as CollectionEntry);
    }
    return { entries, damaged, unwritten };
  }

  private vectorBytes(): number {
    try {
      const fd = openSync(this.vectorPath, constants.O_RDONLY);
      try {
        return fstatSync(fd).size;
      } finally {
        closeSync(fd);
      }
    } catch {
      return 0;
    }
  }

  /** Every row of the vector file, as one array (a row is `meta().length` numbers). */
  vectors(): Float32Array {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.vectorPath);
    } catch {
      return new Float32Array(0);
    }
    const whole = bytes.length - (bytes.length % 4);
    // Copied into an aligned array: a Buffer's offset in its pool need not be a multiple of 4.
    const out = new Float32Array(whole / 4);
    new Uint8Array(out.buffer).set(bytes.subarray(0, whole));
    return out;
  }

  /**
   * Keeps `writes` (the first write fixes the model and the vector length; `dimensions`: what was asked).
   * Under the index's lock: concurrent writers, in this process or others, take turns.
   */
  async add(model: string, dimensions: number | null, writes: readonly EntryWrite[]): Promise<void> {
    if (!writes.length) return;
    makeDir(this.dir);
    await withFileLockAsync(this.indexPath, () => this.write(model, dimensions, writes));
  }

  private write(model: string, dimensions: number | null, writes: readonly EntryWrite[]): void {
    const vectors = writes.flatMap((w) => ('vector' in w ? [w.vector] : []));
    let meta = this.meta();
    if (meta && meta.model !== model) throw modelMismatch(this.name, meta.model, model);
    if (!meta) {
      meta = { name: this.name, model, dimensions, length: vectors[0]?.length ?? 0, created_at: new Date().toISOString() };
      if (!meta.length) throw new CollectionError('length_mismatch', this.name, `collection ${this.name}: the service answered an empty vector`);
      writeWhole(this.metaPath, `${JSON.stringify(meta)}\n`);
    }
    const length = meta.length;
    const bad = vectors.find((v) => v.length !== length);
    if (bad) throw new CollectionError('length_mismatch', this.name, `collection ${this.name} keeps vectors of ${length} numbers; the service answered ${bad.length}`);
    const first = vectors.length ? this.writeRows(vectors, length) : 0;
    const time = new Date().toISOString();
    let next = first;
    const lines = writes.map((w) => {
      const { id, hash, content, metadata } = w;
      const row = 'vector' in w ? next++ : w.row;
      return `${JSON.stringify({ id, hash, row, time, ...(content !== undefined ? { content } : {}), ...(metadata !== undefined ? { metadata } : {}) })}\n`;
    });
    // A line a killed writer left torn gets its end first (appendWhole).
    appendWhole(this.indexPath, lines.join(''));
  }

  /** Writes the rows after the last whole one (a torn row is written over); returns the first's number. */
  private writeRows(vectors: ArrayLike<number>[], length: number): number {
    const size = length * 4;
    const data = Buffer.alloc(vectors.length * size);
    vectors.forEach((v, i) => {
      for (let j = 0; j < length; j++) data.writeFloatLE(v[j]!, i * size + j * 4);
    });
    const fd = openSync(this.vectorPath, constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      const first = Math.floor(fstatSync(fd).size / size);
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written, first * size + written);
      return first;
    } finally {
      closeSync(fd);
    }
  }
}

export function modelMismatch(name: string, kept: string, asked: string): CollectionError {
  return new CollectionError('model_mismatch', name, `collection ${name} holds vectors of ${kept}, not ${asked}`, kept);
}

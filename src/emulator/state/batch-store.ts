import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { durableWriteDone, writeFileAtomicSync } from './fsutil.js';

import type { BatchStatus } from '../../client/types.js';
import { appendAll } from '../../internal/append-whole.js';
import { makeDir } from '../../internal/make-dir.js';
import { failedWriteOf } from '../../internal/system-errors.js';
import { isRecord } from '../../internal/shape.js';
import type { BatchRecord, BatchStorage, BatchUpload, BatchUsage, ResultSink } from './store-api.js';

export type { BatchRecord, BatchStatus, BatchUsage };
/**
 * The emulator states the API's facts (statuses, endpoints, limits, model-id syntax) itself, apart
 * from the client's `facts.ts`: it is the independent side the conformance suite checks the CLI against.
 */
export const TERMINAL: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];

/** What the engine and the routes rely on in a batch's meta.json (one edited by hand may not have it). */
function isBatchRecord(r: unknown, name: string): r is BatchRecord {
  if (!isRecord(r) || !isRecord(r.request_counts)) return false;
  const counts = r.request_counts;
  return (
    r.id === name && typeof r.workspace === 'string' && typeof r.status === 'string' && typeof r.endpoint === 'string' &&
    typeof r.model === 'string' && typeof r.created_at === 'number' && ['total', 'completed', 'failed'].every((k) => typeof counts[k] === 'number')
  );
}

/** One folder per batch: meta.json, requests.jsonl (input, one request per line), results.jsonl. */
export class BatchStore implements BatchStorage {
  readonly dir: string;
  private readonly records = new Map<string, BatchRecord>();
  /** Each workspace's batches, newest first (created_at, then id, descending): listing never sorts. */
  private readonly byWorkspace = new Map<string, BatchRecord[]>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'batches');
    makeDir(this.dir);
    for (const name of readdirSync(this.dir)) {
      if (name.startsWith('.corrupt-')) continue; // set aside on purpose, for a person to look at
      if (name.startsWith('.')) {
        // An upload that never finished: not accepted, so not kept.
        rmSync(join(this.dir, name), { recursive: true, force: true });
        continue;
      }
      const meta = join(this.dir, name, 'meta.json');
      if (!existsSync(meta)) continue;
      try {
        const record: unknown = JSON.parse(readFileSync(meta, 'utf8'));
        if (!isBatchRecord(record, name)) throw Object.assign(new Error('not a batch record'), { name: 'not a batch record' });
        this.records.set(name, record);
      } catch (err) {
        // One unreadable batch never stops the emulator: it is set aside, with a line that says where.
        const aside = join(this.dir, `.corrupt-${name}`);
        renameSync(join(this.dir, name), aside);
        process.stderr.write(`emulator: warning: batch ${name} could not be read (${(err as Error).name}); moved to ${aside}\n`);
      }
    }
    for (const record of this.records.values()) {
      const list = this.byWorkspace.get(record.workspace) ?? [];
      list.push(record);
      this.byWorkspace.set(record.workspace, list);
    }
    for (const list of this.byWorkspace.values()) list.sort(newestFirst);
  }

  /** A workspace's batches, newest first. */
  newestFirst(workspace: string): readonly BatchRecord[] {
    return this.byWorkspace.get(workspace) ?? [];
  }

  private index(record: BatchRecord): void {
    const list = this.byWorkspace.get(record.workspace) ?? [];
    this.byWorkspace.set(record.workspace, list);
    // New batches are the newest: the search ends at once in the usual case.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newestFirst(list[mid]!, record) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, record);
  }

  all(): BatchRecord[] {
    return [...this.records.values()];
  }

  get(id: string): BatchRecord | undefined {
    return this.records.get(id);
  }

  path(id: string, file: 'meta.json' | 'requests.jsonl' | 'results.jsonl'): string {
    return join(this.dir, id, file);
  }

  /** An upload in progress, in a folder `commit` renames to the batch's. */
  upload(id: string): BatchUpload {
    return new FileUpload(join(this.dir, `.incoming-${id}`));
  }

  commit(record: BatchRecord, upload: BatchUpload): void {
    if (!(upload instanceof FileUpload)) throw new Error('not an upload of this store');
    writeFileAtomicSync(join(upload.dir, 'meta.json'), JSON.stringify(record));
    renameSync(upload.dir, join(this.dir, record.id));
    this.records.set(record.id, record);
    this.index(record);
  }

  save(record: BatchRecord): void {
    writeFileAtomicSync(this.path(record.id, 'meta.json'), JSON.stringify(record));
  }

  deleteResults(record: BatchRecord): void {
    rmSync(this.path(record.id, 'results.jsonl'), { force: true });
    rmSync(this.path(record.id, 'requests.jsonl'), { force: true });
    record.results_deleted = true;
    this.save(record);
  }

  requests(id: string): AsyncGenerator<{ custom_id: string; body: Record<string, unknown> }> {
    return requestLines(this.path(id, 'requests.jsonl'));
  }

  /** The results file as it is read (none yet, or deleted: nothing), decoded across reads (a character may straddle two). */
  async *results(id: string): AsyncGenerator<string> {
    const stream = createReadStream(this.path(id, 'results.jsonl'), { highWaterMark: 256 * 1024, encoding: 'utf8' });
    try {
      for await (const chunk of stream) yield chunk as string;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    } finally {
      stream.destroy();
    }
  }

  /** Result lines already written; a torn last line (crash mid-write) is cut off. */
  completedResults(id: string): Record<string, unknown>[] {
    const file = this.path(id, 'results.jsonl');
    if (!existsSync(file)) return [];
    const text = readFileSync(file, 'utf8');
    const end = text.lastIndexOf('\n') + 1;
    if (end < text.length) {
      const fd = openSync(file, 'r+');
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, end)));
      closeSync(fd);
    }
    return text
      .slice(0, end)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  openResults(id: string): ResultSink {
    return new ResultWriter(this.path(id, 'results.jsonl'));
  }

  replaceResults(id: string, items: Record<string, unknown>[]): void {
    writeFileAtomicSync(this.path(id, 'results.jsonl'), items.map((item) => `${JSON.stringify(item)}\n`).join(''));
  }

  resultsSize(id: string): number {
    const f = this.path(id, 'results.jsonl');
    return existsSync(f) ? statSync(f).size : 0;
  }
}

async function* requestLines(file: string): AsyncGenerator<{ custom_id: string; body: Record<string, unknown> }> {
  const input = createReadStream(file);
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) if (line) yield JSON.parse(line);
  } finally {
    input.destroy();
  }
}

/** A batch's requests.jsonl being written, in a folder of its own until the batch is committed. */
class FileUpload implements BatchUpload {
  private fd: number;
  private size = 0;
  private readonly file: string;
  constructor(readonly dir: string) {
    makeDir(dir);
    this.file = join(dir, 'requests.jsonl');
    this.fd = openSync(this.file, 'w', 0o600);
  }
  append(lines: Buffer): void {
    try {
      appendAll(this.fd, lines, this.size);
    } catch (err) {
      throw failedWriteOf(err, this.file);
    }
    this.size += lines.length;
  }
  finish(): void {
    try {
      fsyncSync(this.fd);
    } catch (err) {
      throw failedWriteOf(err, this.file);
    }
    this.closeFile();
  }
  requests(): AsyncGenerator<{ custom_id: string; body: Record<string, unknown> }> {
    return requestLines(this.file);
  }
  discard(): void {
    this.closeFile();
    rmSync(this.dir, { recursive: true, force: true });
  }
  private closeFile(): void {
    // Closed once: its number may be another file's by then.
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
  }
}

export class ResultWriter implements ResultSink {
  private readonly fd: number;
  private unsynced = 0;
  /** Bytes of whole lines in the file. */
  private size: number;
  constructor(private readonly path: string) {
    this.fd = openSync(path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }
  /** Writes the line whole or not at all (a disk that fills up mid-line). */
  append(item: unknown): void {
    const line = Buffer.from(`${JSON.stringify(item)}\n`);
    this.named(() => appendAll(this.fd, line, this.size));
    this.size += line.length;
    if (++this.unsynced >= 50) this.sync();
  }
  sync(): void {
    this.named(() => fsyncSync(this.fd));
    this.unsynced = 0;
    durableWriteDone();
  }
  /** A failed write names the results file (a full disk says where). */
  private named(write: () => unknown): void {
    try {
      write();
    } catch (err) {
      throw failedWriteOf(err, this.path);
    }
  }
  close(): void {
    try {
      this.sync();
    } finally {
      closeSync(this.fd);
    }
  }
}

/** The listing order: newest first, then by id (descending). */
export function newestFirst(a: BatchRecord, b: BatchRecord): number {
  return b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

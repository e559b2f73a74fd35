/**
 * The batches this machine made, for a service that has no listing: every create and every status
 * seen since is a line of batches.jsonl in the state folder (appended whole; a line per change, the
 * last one of an id wins), each with the API root it was made at.
 */
import { join } from 'node:path';
import type { Batch, BatchList, BatchStatus } from '../client/types.js';
import { stateHome } from '../config/state-dir.js';
import { appendWhole } from '../internal/append-whole.js';
import { readKeptText, sayKeptProblem } from '../internal/kept-state.js';
import { makeDir } from '../internal/make-dir.js';
import { isRecord } from '../internal/shape.js';
import { rootKey, sameRoot } from '../internal/api-root.js';

/** The index is read whole: a line a batch, so this holds some 400,000 of them. */
const MAX_INDEX_BYTES = 128 * 1024 * 1024;

export interface IndexedBatch {
  id: string;
  api_root: string;
  endpoint?: string;
  model?: string;
  /** The requests file it was made from. */
  input?: string;
  created_at?: number;
  status?: BatchStatus;
  request_counts?: Batch['request_counts'];
  /** Unix seconds (this machine's clock) the status was last seen. */
  seen_at: number;
}

const file = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'batches.jsonl');

/** What this process last wrote of each batch: a poll that changed nothing writes nothing. */
const written = new Map<string, string>();

/**
 * Notes a batch a create or a get answered (`input`: the file it was made from). Best effort: a full disk
 * loses no work. Returns why it could not be noted (for a create to say), else undefined.
 */
export function indexBatch(env: NodeJS.ProcessEnv, apiRoot: string, b: Pick<Batch, 'id' | 'status' | 'request_counts'> & Partial<Batch>, input?: string): string | undefined {
  const entry: Omit<IndexedBatch, 'seen_at'> = {
    id: b.id,
    api_root: rootKey(apiRoot),
    ...(b.endpoint ? { endpoint: b.endpoint } : {}),
    ...(b.model ? { model: b.model } : {}),
    ...(input ? { input } : {}),
    ...(typeof b.created_at === 'number' ? { created_at: b.created_at } : {}),
    status: b.status,
    request_counts: b.request_counts,
  };
  const key = `${stateHome(env)}|${entry.api_root}|${b.id}`;
  const text = JSON.stringify(entry);
  if (written.get(key) === text) return undefined;
  try {
    makeDir(stateHome(env));
    appendWhole(file(env), `${JSON.stringify({ ...entry, seen_at: Math.floor(Date.now() / 1000) })}\n`);
    written.set(key, text);
    return undefined;
  } catch (err) {
    // The index is a convenience: the batch itself is the service's.
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}


/**
 * The index's entries. One that cannot be read is said and taken as empty; its damaged lines (a line torn by a
 * crash, an edit) are said by number and left out: the lines after them are read, and appends never rewrite it.
 */
function indexLines(env: NodeJS.ProcessEnv): Record<string, unknown>[] {
  const text = readKeptText(file(env), "taken as empty until it can be read (batch get ID still asks the service)", MAX_INDEX_BYTES) ?? '';
  const entries: Record<string, unknown>[] = [];
  const damaged: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const e: unknown = JSON.parse(line);
      if (isRecord(e)) return void entries.push(e);
    } catch {
      /* said below */
    }
    damaged.push(i + 1);
  });
  if (damaged.length) sayKeptProblem(file(env), `${damaged.length === 1 ? 'line' : 'lines'} ${damaged.slice(0, 5).join(', ')}${damaged.length > 5 ? ', …' : ''} damaged and left out (the other lines are read; fix them or delete them)`);
  return entries;
}

/** The API root each batch of the index was made at, by id. */
export function indexedRoots(env: NodeJS.ProcessEnv): Map<string, string> {
  const roots = new Map<string, string>();
  for (const e of indexLines(env)) if (typeof e.id === 'string' && typeof e.api_root === 'string') roots.set(e.id, e.api_root);
  return roots;
}

/** The batches made at `apiRoot`, newest first, each as last seen. */
export function indexedBatches(env: NodeJS.ProcessEnv, apiRoot: string): IndexedBatch[] {
  const byId = new Map<string, IndexedBatch>();
  for (const e of indexLines(env)) {
    if (typeof e.id !== 'string' || typeof e.api_root !== 'string' || !sameRoot(e.api_root, apiRoot)) continue;
    const had = byId.get(e.id);
    byId.delete(e.id);
    byId.set(e.id, { ...had, ...(e as unknown as IndexedBatch) });
  }
  // Newest first: by the service's created_at, then the order they were made in.
  const all = [...byId.values()].map((b, i) => ({ b, i }));
  all.sort((x, y) => (y.b.created_at ?? 0) - (x.b.created_at ?? 0) || y.i - x.i);
  return all.map(({ b }) => b);
}

export interface LocalQuery {
  limit?: number;
  after?: string;
  status?: string[];
  created_after?: string | number;
  created_before?: string | number;
}

/** The index as a listing page of the service would have it (the same filters), batches as last seen. */
export function localPage(env: NodeJS.ProcessEnv, apiRoot: string, q: LocalQuery, all = false): BatchList {
  let items = indexedBatches(env, apiRoot);
  if (q.status?.length) items = items.filter((b) => b.status && q.status!.includes(b.status === 'finalizing' ? 'in_progress' : b.status === 'cancelling' ? 'in_progress' : b.status));
  if (q.created_after !== undefined) items = items.filter((b) => (b.created_at ?? 0) > Number(q.created_after));
  if (q.created_before !== undefined) items = items.filter((b) => (b.created_at ?? 0) < Number(q.created_before));
  if (q.after !== undefined) {
    const at = items.findIndex((b) => b.id === q.after);
    items = at === -1 ? [] : items.slice(at + 1);
  }
  const limit = all ? items.length : (q.limit ?? 20);
  const page = items.slice(0, limit);
  const data = page.map((b) => ({
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint ?? '',
    model: b.model ?? '',
    completion_window: '24h',
    created_at: b.created_at ?? 0,
    finalized_at: null,
    status: b.status ?? 'validating',
    request_counts: b.request_counts ?? { total: 0, completed: 0, failed: 0 },
    error: null,
    ...(b.input ? { input: b.input } : {}),
    seen_at: b.seen_at,
  })) as unknown as Batch[];
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: items.length > page.length } as BatchList;
}

/**
 * Embedding items into a collection: a plan first (what is already kept with the same content is not
 * sent again, so a run cut short is resumed by running it again), then the texts in batches, a bounded
 * number of requests at a time, each batch's vectors kept as soon as it is answered. Under a spend
 * guard the whole plan is checked before anything is sent, and each answer's usage recorded.
 */
import type { RouterClient } from '../../client/index.js';
import type { EmbeddingsRequest } from '../../client/resources/embeddings.js';
import type { EmbeddingResponse } from '../../client/types.js';
import { CollectionError } from '../errors.js';
import { usageFields } from '../spend/ledger.js';
import type { SpendCall, SpendGuard } from '../spend/spend-guard.js';
import { checkEntryId, contentHash, modelMismatch, type Collection, type EntryWrite } from './store.js';
import { checkCounts } from '../checked-options.js';

export interface EmbedItem {
  id: string;
  content: string;
  metadata?: Record<string, unknown> | undefined;
}

export interface PlanOptions {
  /** The embedding model; default: the collection's (required for a new collection). */
  model?: string | undefined;
  /** Dimensions to ask for; default: what the collection asked for, if anything. */
  dimensions?: number | undefined;
  /** Keep each item's content beside its vector. */
  store?: boolean | undefined;
}

/** What a run will do: the items to send, entries kept again without a request (same text, new metadata), those left as they are. */
export interface EmbedPlan {
  model: string;
  dimensions: number | null;
  send: EmbedItem[];
  relabel: EntryWrite[];
  unchanged: number;
  store: boolean;
}

/** The plan for `items` (each id once): refuses a model or dimensions other than the collection's, sending nothing. */
export function planEmbeds(collection: Collection, items: readonly EmbedItem[], opts: PlanOptions = {}): EmbedPlan {
  const meta = collection.meta();
  const model = opts.model ?? meta?.model;
  if (!model) throw new CollectionError('no_model', collection.name, `collection ${collection.name} is new: name the model to embed it with`);
  if (meta && meta.model !== model) throw modelMismatch(collection.name, meta.model, model);
  if (meta && opts.dimensions !== undefined && opts.dimensions !== (meta.dimensions ?? meta.length)) {
    throw new CollectionError('length_mismatch', collection.name, `collection ${collection.name} keeps vectors of ${meta.length} numbers, not ${opts.dimensions}`);
  }
  const seen = new Set<string>();
  for (const item of items) {
    checkEntryId(collection.name, item.id);
    if (!item.content.trim()) throw new CollectionError('invalid_items', collection.name, `the content of ${JSON.stringify(item.id)} is blank: there is nothing to embed in it`);
    if (seen.has(item.id)) throw new CollectionError('invalid_items', collection.name, `the id ${JSON.stringify(item.id)} is given twice`);
    seen.add(item.id);
  }
  const kept = meta ? collection.entries().entries : new Map();
  const plan: EmbedPlan = { model, dimensions: meta ? meta.dimensions : (opts.dimensions ?? null), send: [], relabel: [], unchanged: 0, store: !!opts.store };
  for (const item of items) {
    const hash = contentHash(item.content);
    const old = kept.get(item.id);
    if (old?.hash !== hash) {
      plan.send.push(item);
      continue;
    }
    const content = opts.store ? item.content : old.content;
    const metadata = item.metadata ?? old.metadata;
    if (content === old.content && JSON.stringify(metadata) === JSON.stringify(old.metadata)) plan.unchanged++;
    else plan.relabel.push({ id: item.id, hash, row: old.row, ...(content !== undefined ? { content } : {}), ...(metadata !== undefined ? { metadata } : {}) });
  }
  return plan;
}

export interface SendOptions {
  client: RouterClient;
  /** Texts per request (default 100). */
  batchSize?: number | undefined;
  /** Requests under way at once (default 4). */
  concurrency?: number | undefined;
  signal?: AbortSignal | undefined;
  /** More of the request body: `user`, `provider`, `input_type`. */
  body?: Partial<EmbeddingsRequest> | undefined;
  /** Checks the whole plan before anything is sent, and records each answer's usage (in the ledger as `command`). */
  guard?: SpendGuard | undefined;
  command?: string | undefined;
  /** Each answer as it comes, before its vectors are checked and kept (a program's own record of usage). */
  onAnswer?: ((res: EmbeddingResponse, batch: readonly EmbedItem[]) => void) | undefined;
  /** An answer's generation id, as its head arrives. */
  answering?: ((id: string) => void) | undefined;
  /** The call the guard checked for these requests (runPlan's): each ends it, naming it (SpendGuard.record). */
  checked?: SpendCall | undefined;
}

export const DEFAULT_BATCH_SIZE = 100;
export const DEFAULT_CONCURRENCY = 4;

/** The request body of some texts under a plan. */
export function embedBody(plan: Pick<EmbedPlan, 'model' | 'dimensions'>, input: string[], more?: Partial<EmbeddingsRequest>): EmbeddingsRequest {
  return { ...more, input, model: plan.model, ...(plan.dimensions !== null ? { dimensions: plan.dimensions } : {}) };
}

/**
 * Carries out a plan: returns how many items were embedded. A failed request stops new ones from
 * starting; those under way are kept as they end, then the failure is thrown.
 */
export async function runPlan(collection: Collection, plan: EmbedPlan, opts: SendOptions): Promise<number> {
  // Else a batchSize of 0 made batches for ever, and a concurrency of 0 sent none and said 0 embedded.
  checkCounts('runPlan()', opts, ['batchSize', 'concurrency'], 1);
  const size = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const batches: EmbedItem[][] = [];
  for (let i = 0; i < plan.send.length; i += size) batches.push(plan.send.slice(i, i + size));
  const checked: SpendCall = { body: embedBody(plan, plan.send.map((s) => s.content), opts.body) as unknown as Record<string, unknown>, models: [plan.model], completes: false, requests: batches.length };
  if (batches.length) await opts.guard?.check(checked);
  opts = { ...opts, checked };
  const taken = { next: 0 };
  try {
    await collection.add(plan.model, plan.dimensions, plan.relabel);
    return batches.length ? await sendBatches(collection, plan, opts, batches, taken) : 0;
  } finally {
    // Checked as one call: if no request went, it is under way no longer (the guard's hold can go).
    if (batches.length && !taken.next) opts.guard?.unsent(checked);
  }
}

async function sendBatches(collection: Collection, plan: EmbedPlan, opts: SendOptions, batches: EmbedItem[][], taken: { next: number }): Promise<number> {
  let embedded = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure && taken.next < batches.length && !opts.signal?.aborted) {
      const batch = batches[taken.next++]!;
      try {
        const vectors = await embedTexts(plan, batch.map((b) => b.content), opts, batch);
        await collection.add(plan.model, plan.dimensions, batch.map((item, i) => entryOf(item, vectors[i]!, plan.store)));
        embedded += batch.length;
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? DEFAULT_CONCURRENCY, batches.length) }, worker));
  if (failure) throw failure.err;
  opts.signal?.throwIfAborted();
  return embedded;
}

function entryOf(item: EmbedItem, vector: number[], store: boolean): EntryWrite {
  return { id: item.id, hash: contentHash(item.content), vector, ...(store ? { content: item.content } : {}), ...(item.metadata !== undefined ? { metadata: item.metadata } : {}) };
}

/** One request: the texts' vectors in their order (an answer without one vector each is refused), its usage recorded. */
export async function embedTexts(plan: Pick<EmbedPlan, 'model' | 'dimensions'>, texts: string[], opts: SendOptions, items: readonly EmbedItem[] = []): Promise<number[][]> {
  const { guard } = opts;
  const res = await opts.client.embeddings
    .create(embedBody(plan, texts, opts.body), { signal: opts.signal, ...(opts.answering ? { answering: opts.answering } : {}) })
    .catch((err: unknown) => {
      guard?.failed(err, opts.checked);
      throw err;
    });
  guard?.record({ command: opts.command ?? 'embed', endpoint: '/v1/embeddings', model: res.model ?? plan.model, ...(res.id ? { id: res.id } : {}), ...usageFields(res.usage as unknown as Record<string, unknown>) }, opts.checked);
  opts.onAnswer?.(res, items);
  const { decodeEmbedding } = await import('../../client/resources/embeddings.js');
  const vectors: number[][] = [];
  for (const d of res.data) if (Number.isInteger(d.index) && d.index >= 0 && d.index < texts.length) vectors[d.index] = decodeEmbedding(d.embedding);
  const missing = texts.findIndex((_, i) => !vectors[i]);
  if (res.data.length !== texts.length || missing !== -1) throw new CollectionError('incomplete_answer', '', `the service answered ${res.data.length} vectors for ${texts.length} inputs`);
  return vectors;
}

/** Embeds `items` into the collection (plan and run in one): how many were sent, and how many were already kept. */
export async function embedInto(collection: Collection, items: readonly EmbedItem[], opts: SendOptions & PlanOptions): Promise<{ embedded: number; unchanged: number }> {
  checkCounts('embedInto()', opts, ['batchSize', 'concurrency'], 1);
  const plan = planEmbeds(collection, items, opts);
  const embedded = await runPlan(collection, plan, opts);
  return { embedded, unchanged: plan.unchanged + plan.relabel.length };
}

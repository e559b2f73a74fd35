import { checkShape, SHAPES } from '../answer-shape.js';
import type { Batch, BatchCreateRequest, BatchList, BatchStatus } from '../types.js';
import { APIError, malformedJson, ProtocolError } from '../errors.js';
import { ArraySplitter, JSONSplitError } from '../../internal/json-split.js';
import { bodyError, toConnectionError } from '../connection-errors.js';
import { callHeaders, Resource, type PlainCallOptions } from './shared.js';
import type { HttpCore, RawResponse, RequestOptions } from '../core.js';
import { queryNames, wireQuery } from '../query-names.js';

/** Where batches live, under the API root: api.md's `{base_url}/batches`, then the deployed service's. */
export const BATCH_PATHS = ['/v1/batches', '/beta/batches'] as const;

/** Where a service keeps its batches, as far as it is known: the path, and whether it lists them. */
export interface BatchPlace {
  path?: string | undefined;
  /** false: the service has no listing there (404 or 405 to GET). */
  listing?: boolean | undefined;
}

export interface BatchPlaceOptions {
  /** The place as remembered, or named outright (`fixed`: never looked for elsewhere); read at the first batch call, so it may be a getter. */
  place?: BatchPlace | undefined;
  fixed?: boolean | undefined;
  /** Called when a call learns something of the place (to remember it for the next run). */
  onPlace?: ((place: BatchPlace) => void) | undefined;
  /** Called with each batch a create or a get answers (a local index of the batches made). */
  onBatch?: ((batch: Batch, how: 'created' | 'seen') => void) | undefined;
}

/** A listing that is not there: 404 or 405 to GET where batches are created. */
export const isNoListing = (err: unknown) => err instanceof APIError && (err.status === 404 || err.status === 405);

export interface BatchListQuery {
  limit?: number | undefined;
  after?: string | undefined;
  status?: (Exclude<BatchStatus, 'finalizing' | 'cancelling'>)[] | undefined;
  created_after?: string | number | undefined;
  created_before?: string | number | undefined;
}

/** The listing's query names, the service's own (api.md, `GET {base_url}/batches`). */
export const BATCH_LIST_QUERY = queryNames<BatchListQuery>()({ limit: 'limit', after: 'after', status: 'status', created_after: 'created_after', created_before: 'created_before' });

export type BatchHead = Omit<BatchCreateRequest, 'requests'>;

export class Batches extends Resource {
  private known: BatchPlace | undefined;

  constructor(core: HttpCore, private readonly places: BatchPlaceOptions = {}) {
    super(core);
  }

  /** The place as the options give it, asked at first use: a run that asks nothing of batches reads nothing for them. */
  private get place(): BatchPlace {
    return (this.known ??= { ...this.places.place });
  }

  /** The batches path as known (undefined: not found out yet). */
  get path(): string | undefined {
    return this.place.path;
  }

  /** Whether the service lists batches (undefined: not known yet). */
  get hasListing(): boolean | undefined {
    return this.place.listing;
  }

  /** The URL of the batch `id` (or of the collection), where it is or would be asked first. */
  url(id?: string): string {
    return this.core.url(`${this.place.path ?? BATCH_PATHS[0]}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`, 'root');
  }

  private learn(patch: BatchPlace): void {
    if (Object.entries(patch).every(([k, v]) => this.place[k as keyof BatchPlace] === v)) return;
    Object.assign(this.place, patch);
    this.places.onPlace?.({ ...this.place });
  }

  /**
   * Sends to the known place, or tries each in turn: a 404 there is no such route (a create answered
   * 404 made no batch), so the next is asked; the first answer elsewhere settles the place. All 404:
   * the first place's error, with the URLs asked.
   */
  private async atPlace(suffix: string, req: Omit<RequestOptions, 'path' | 'base'>): Promise<RawResponse> {
    // A remembered place that has moved (a create answered 404 there) is looked for again; a named one never is.
    const known = this.place.path;
    const paths = !known ? [...BATCH_PATHS] : req.method === 'POST' && !this.places.fixed ? [known, ...BATCH_PATHS.filter((p) => p !== known)] : [known];
    let first: APIError | undefined;
    const asked: string[] = [];
    for (const path of paths) {
      try {
        const res = await this.core.send({ ...req, path: path + suffix, base: 'root' });
        if (!this.places.fixed) this.learn({ path });
        return res;
      } catch (err) {
        if (!(err instanceof APIError) || err.status !== 404 || paths.length === 1) throw withUrl(err, this.core.url(path + suffix, 'root'));
        asked.push(this.core.url(path + suffix, 'root'));
        first ??= err;
      }
    }
    throw withUrl(first!, asked.join(' and '));
  }

  private async jsonAt<T>(suffix: string, req: Omit<RequestOptions, 'path' | 'base'>): Promise<T> {
    const res = await this.atPlace(suffix, req);
    const text = await res.body.text().catch((err) => {
      throw toConnectionError(err, this.url() + suffix);
    });
    try {
      return JSON.parse(text) as T;
    } catch {
      throw malformedJson(this.core, text);
    }
  }

  /** Creates a batch from an in-memory request list. */
  create(params: BatchCreateRequest, opts: PlainCallOptions = {}): Promise<Batch> {
    const { requests, ...head } = params;
    return this.createStreaming(head, async function* () {
      for (let i = 0; i < requests.length; i++) yield (i ? ',' : '') + JSON.stringify(requests[i]);
    }, opts);
  }

  /**
   * Creates a batch whose requests are streamed: `requests()` yields the JSON text of the
   * array's elements, comma-separated (it is called again for a retry). `endpoint` and `model`
   * go first in the body, as the service requires. Retried only when the service cannot have
   * accepted the batch, so that a retry never creates a second one.
   */
  async createStreaming(head: BatchHead, requests: () => AsyncIterable<string | Uint8Array, unknown, undefined>, opts: PlainCallOptions = {}): Promise<Batch> {
    const { endpoint, model, ...others } = head;
    const prefix = JSON.stringify({ endpoint, model, ...others }).slice(0, -1) + ',"requests":[';
    const data = await this.jsonAt<Batch>('', {
      method: 'POST',
      bodyFactory: async function* () {
        yield prefix;
        yield* requests();
        yield ']}';
      },
      retry: 'unaccepted',
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      headers: callHeaders(opts),
    });
    checkShape(data, SHAPES.batch);
    this.places.onBatch?.(data, 'created');
    return data;
  }

  /** A page of the listing; a service without one answers 404 or 405 (`isNoListing`), and that is remembered. */
  async list(query: BatchListQuery = {}, opts: PlainCallOptions = {}): Promise<BatchList> {
    let data: BatchList;
    try {
      data = await this.jsonAt<BatchList>('', {
      method: 'GET',
      query: wireQuery(query, BATCH_LIST_QUERY),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      headers: callHeaders(opts),
    });
    } catch (err) {
      if (!isNoListing(err)) throw err;
      // A 405 is the create's route without a GET: the place is this one.
      this.learn({ listing: false, ...((err as APIError).status === 405 && !this.place.path ? { path: BATCH_PATHS[1] } : {}) });
      throw err;
    }
    checkShape(data, SHAPES.batchList);
    this.learn({ listing: true });
    return data;
  }

  /** Follows `last_id`/`has_more` through every page; a cursor that comes again is a listing that does not end. */
  async *listAll(query: BatchListQuery = {}, opts: PlainCallOptions = {}): AsyncGenerator<BatchList, void, undefined> {
    let after = query.after;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.list({ ...query, after }, opts);
      yield page;
      if (!page.has_more || !page.last_id) return;
      if (seen.has(page.last_id)) throw new ProtocolError(`the service's batch listing does not end: last_id ${page.last_id} comes again`);
      seen.add(page.last_id);
      after = page.last_id;
    }
  }

  /** The whole batch, results included, parsed in memory. */
  async get(id: string, opts: PlainCallOptions = {}): Promise<Batch> {
    const data = await this.jsonAt<Batch>(`/${encodeURIComponent(id)}`, { method: 'GET', signal: opts.signal, timeoutMs: opts.timeoutMs, headers: callHeaders(opts) });
    checkShape(data, SHAPES.batch);
    this.places.onBatch?.(data, 'seen');
    return data;
  }

  /**
   * The batch without holding its results in memory: each result item's JSON bytes go to
   * `onResult` as they arrive (await-able for backpressure); the rest of the batch is returned.
   */
  async getStreaming(id: string, onResult: (json: Buffer, index: number) => void | Promise<void>, opts: PlainCallOptions = {}): Promise<Batch> {
    const suffix = `/${encodeURIComponent(id)}`;
    const res = await this.atPlace(suffix, { method: 'GET', signal: opts.signal, timeoutMs: opts.timeoutMs, headers: callHeaders(opts) });
    const pending: Buffer[] = [];
    const splitter = new ArraySplitter('results', (bytes) => {
      pending.push(bytes);
    });
    let index = 0;
    // Only a failure to read the body is the connection's; what onResult throws goes out as it is.
    const body = res.body[Symbol.asyncIterator]();
    let done = false;
    try {
      for (;;) {
        let step: IteratorResult<Uint8Array>;
        try {
          step = await body.next();
        } catch (err) {
          throw bodyError(err, this.url(id));
        }
        if ((done = !!step.done)) break;
        try {
          splitter.push(step.value as Buffer);
        } catch (err) {
          if (err instanceof JSONSplitError) throw new ProtocolError(`server sent a malformed batch: ${err.message}`);
          throw err;
        }
        for (const item of pending.splice(0)) await onResult(item, index++);
      }
    } finally {
      if (!done) await body.return?.();
    }
    let batch: Batch;
    try {
      batch = splitter.end() as unknown as Batch;
    } catch (err) {
      throw new ProtocolError(`server sent a malformed batch: ${(err as Error).message}`);
    }
    checkShape(batch, SHAPES.batch);
    this.places.onBatch?.(batch, 'seen');
    return batch;
  }
}

/** The error with the URL (or URLs) asked, for a message that names where a batch was looked for. */
function withUrl(err: unknown, url: string): unknown {
  if (err instanceof APIError && (err as { url?: string }).url === undefined) Object.defineProperty(err, 'url', { value: url, enumerable: false });
  return err;
}

import { checkShape, SHAPES } from '../answer-shape.js';
import type { Batch, BatchCreateRequest, BatchList, BatchStatus } from '../types.js';
import { ProtocolError } from '../errors.js';
import { ArraySplitter, JSONSplitError } from '../../internal/json-split.js';
import { bodyError } from '../connection-errors.js';
import { Resource, type CallOptions } from './shared.js';

export interface BatchListQuery {
  limit?: number;
  after?: string;
  status?: (Exclude<BatchStatus, 'finalizing' | 'cancelling'>)[];
  created_after?: string | number;
  created_before?: string | number;
}

export type BatchHead = Omit<BatchCreateRequest, 'requests'>;

export class Batches extends Resource {
  /** Creates a batch from an in-memory request list. */
  create(params: BatchCreateRequest, opts: CallOptions = {}): Promise<Batch> {
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
  async createStreaming(head: BatchHead, requests: () => AsyncIterable<string | Uint8Array>, opts: CallOptions = {}): Promise<Batch> {
    const { endpoint, model, ...others } = head;
    const prefix = JSON.stringify({ endpoint, model, ...others }).slice(0, -1) + ',"requests":[';
    const { data } = await this.core.json<Batch>({
      method: 'POST',
      path: '/batches',
      bodyFactory: async function* () {
        yield prefix;
        yield* requests();
        yield ']}';
      },
      retry: 'unaccepted',
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      headers: opts.headers,
    });
    checkShape(data, SHAPES.batch);
    return data;
  }

  async list(query: BatchListQuery = {}, opts: CallOptions = {}): Promise<BatchList> {
    const { data } = await this.core.json<BatchList>({
      method: 'GET',
      path: '/batches',
      query: {
        limit: query.limit,
        after: query.after,
        status: query.status,
        created_after: query.created_after === undefined ? undefined : String(query.created_after),
        created_before: query.created_before === undefined ? undefined : String(query.created_before),
      },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    checkShape(data, SHAPES.batchList);
    return data;
  }

  /** Follows `last_id`/`has_more` through every page; a cursor that comes again is a listing that does not end. */
  async *listAll(query: BatchListQuery = {}, opts: CallOptions = {}): AsyncGenerator<BatchList> {
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
  async get(id: string, opts: CallOptions = {}): Promise<Batch> {
    const { data } = await this.core.json<Batch>({ method: 'GET', path: `/batches/${encodeURIComponent(id)}`, signal: opts.signal, timeoutMs: opts.timeoutMs });
    checkShape(data, SHAPES.batch);
    return data;
  }

  /**
   * The batch without holding its results in memory: each result item's JSON bytes go to
   * `onResult` as they arrive (await-able for backpressure); the rest of the batch is returned.
   */
  async getStreaming(id: string, onResult: (json: Buffer, index: number) => void | Promise<void>, opts: CallOptions = {}): Promise<Batch> {
    const path = `/batches/${encodeURIComponent(id)}`;
    const res = await this.core.send({ method: 'GET', path, signal: opts.signal, timeoutMs: opts.timeoutMs });
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
          throw bodyError(err, this.core.url(path));
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
    return batch;
  }
}

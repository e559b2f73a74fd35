import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArraySplitter, JSONSplitError } from '../internal/json-split.js';
import type { Ctx } from './http.js';
import { HttpError, errorTypeFor } from './http.js';
import { BatchStore, TERMINAL, type BatchRecord, type BatchStatus, type BatchUsage } from './batch-store.js';
import type { StateStore } from './store.js';
import { chatCompletion, genId, planChat, textOf } from './chat.js';
import { planEmbeddings } from './embeddings.js';
import { planResponses } from './responses.js';
import { findModel, MODEL_ID_PATTERN, round } from './models.js';
import { chargeable, drainOrClose } from './billing.js';
import { knownProvider } from './validate.js';

export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'];
export const MAX_BATCH_BYTES = 200 * 1024 * 1024;
export const MAX_BATCH_REQUESTS = 5000;
const DAY = 86_400;
const RETENTION_SECONDS = 30 * DAY;
const WINDOW_SECONDS = DAY;
const LISTABLE = ['validating', 'in_progress', 'completed', 'failed', 'expired', 'cancelled'];
/** Batches are billed at half the per-token price. */
const BATCH_DISCOUNT = 0.5;

type Body = Record<string, unknown>;

export interface BatchEngineOptions {
  /** Pause before each request (and each state change), so that tests can watch the states. */
  delayMs: number;
}

const newBatchId = () => `batch_${Date.now().toString(36)}${randomBytes(8).toString('hex')}`;

export function publicBatch(r: BatchRecord): Body {
  return {
    id: r.id,
    object: 'batch',
    endpoint: r.endpoint,
    model: r.model,
    completion_window: r.completion_window,
    created_at: r.created_at,
    finalized_at: r.finalized_at,
    status: r.status,
    request_counts: r.request_counts,
    error: r.error,
    usage: r.usage,
  };
}

function bad(message: string): never {
  throw new HttpError(400, message, 'invalid_request');
}

function modelKindFor(endpoint: string) {
  return endpoint === '/v1/embeddings' ? 'embedding' : 'chat';
}

/** Checks of the batch's own fields, made once the upload is complete. */
function checkBatchFields(rest: Body): { endpoint: string; model: string; provider: BatchRecord['provider'] } {
  const endpoint = rest.endpoint;
  if (typeof endpoint !== 'string' || !BATCH_ENDPOINTS.includes(endpoint)) bad(`endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  const model = rest.model;
  if (typeof model !== 'string' || model === '') bad('model must be a non-empty string');
  if (!MODEL_ID_PATTERN.test(model)) bad(`model must look like <author>/<slug>, got ${JSON.stringify(model)}`);
  const spec = findModel(model);
  if (!spec || spec.kind !== modelKindFor(endpoint)) bad(`${model} is not a valid model ID for ${endpoint}`);
  if (rest.completion_window !== undefined && rest.completion_window !== '24h') bad('completion_window must be "24h"');
  let provider: BatchRecord['provider'] = null;
  if (rest.provider !== undefined && rest.provider !== null) {
    const p = rest.provider as Body;
    if (typeof p !== 'object' || Array.isArray(p)) bad('provider must be an object');
    const extra = Object.keys(p).filter((k) => k !== 'only' && k !== 'allow_fallbacks');
    if (extra.length) bad(`provider.${extra[0]} is not supported in batches (only "only" and "allow_fallbacks")`);
    if (p.only !== undefined && (!Array.isArray(p.only) || p.only.some((s) => typeof s !== 'string'))) bad('provider.only must be an array of provider slugs');
    if (p.allow_fallbacks !== undefined && typeof p.allow_fallbacks !== 'boolean') bad('provider.allow_fallbacks must be a boolean');
    const only = p.only as string[] | undefined;
    if (only) {
      const notAllowed = only.find((slug) => !knownProvider(slug) || !spec.providers.includes(slug));
      if (notAllowed) throw new HttpError(403, `Provider "${notAllowed}" is not allowed for ${model}`, 'permission_denied');
    }
    provider = { ...(only ? { only } : {}), ...(p.allow_fallbacks !== undefined ? { allow_fallbacks: p.allow_fallbacks as boolean } : {}) };
  }
  return { endpoint, model, provider };
}

export class BatchEngine {
  readonly store: BatchStore;
  private readonly running = new Set<string>();
  private stopped = false;

  constructor(
    private readonly state: StateStore,
    readonly opts: BatchEngineOptions,
  ) {
    this.store = new BatchStore(state.dir);
  }

  now(): number {
    return Math.floor(this.state.now() / 1000);
  }

  resumeAll(): void {
    for (const r of this.store.all()) if (!TERMINAL.includes(r.status)) this.run(r.id);
  }

  stop(): void {
    this.stopped = true;
  }

  async create(ctx: Ctx): Promise<void> {
    const declared = Number(ctx.header('content-length') ?? 0);
    if (declared > MAX_BATCH_BYTES) throw new HttpError(413, 'Batch input larger than 200 MB', 'payload_too_large');
    chargeable(ctx);
    const id = newBatchId();
    const dir = this.store.incoming(id);
    const fd = openSync(join(dir, 'requests.jsonl'), 'w', 0o600);
    const seen = new Set<string>();
    let lines: string[] = [];
    const splitter = new ArraySplitter(
      'requests',
      (bytes, i) => {
        if (i >= MAX_BATCH_REQUESTS) bad(`a batch holds at most ${MAX_BATCH_REQUESTS} requests`);
        let item: unknown;
        try {
          item = JSON.parse(bytes.toString('utf8'));
        } catch {
          bad(`requests[${i}] is not valid JSON`);
        }
        if (!item || typeof item !== 'object' || Array.isArray(item)) bad(`requests[${i}] must be an object`);
        const { custom_id, body } = item as Body;
        if (typeof custom_id !== 'string' || custom_id === '') bad(`requests[${i}] has no custom_id`);
        if (seen.has(custom_id)) throw new HttpError(422, `duplicate custom_id "${custom_id}" at requests[${i}]`, 'unprocessable');
        seen.add(custom_id);
        if (!body || typeof body !== 'object' || Array.isArray(body)) bad(`requests[${i}] (${custom_id}) has no body object`);
        lines.push(JSON.stringify({ custom_id, body }));
      },
      (before) => {
        if (!before.includes('endpoint') || !before.includes('model')) bad('"endpoint" and "model" must come before "requests" in the JSON body');
      },
    );
    let size = 0;
    const logged: Buffer[] = [];
    try {
      for await (const chunk of ctx.req) {
        size += (chunk as Buffer).length;
        if (ctx.log && size <= 1024 * 1024) logged.push(chunk as Buffer);
        if (size > MAX_BATCH_BYTES) throw new HttpError(413, 'Batch input larger than 200 MB', 'payload_too_large');
        splitter.push(chunk as Buffer);
        if (lines.length) {
          writeSync(fd, `${lines.join('\n')}\n`);
          lines = [];
        }
      }
      let rest: Body;
      try {
        rest = splitter.end();
      } catch (err) {
        if (err instanceof JSONSplitError) bad(`request body is not a valid batch: ${err.message}`);
        throw err;
      }
      if (!splitter.keys.includes('requests') || !Array.isArray(rest.requests)) bad('requests must be a non-empty array');
      if (splitter.elements === 0) bad('requests must be a non-empty array');
      if (ctx.log && size <= 1024 * 1024) ctx.log.body = JSON.parse(Buffer.concat(logged).toString('utf8'));
      const fields = checkBatchFields(rest);
      fsyncSync(fd);
      closeSync(fd);
      const record: BatchRecord = {
        id,
        workspace: ctx.workspace,
        ...fields,
        completion_window: '24h',
        created_at: this.now(),
        finalized_at: null,
        status: 'validating',
        request_counts: { total: splitter.elements, completed: 0, failed: 0 },
        error: null,
        usage: null,
        payment_due: null,
        results_deleted: false,
      };
      this.store.commit(record);
      ctx.send(202, publicBatch(record));
      this.run(id);
    } catch (err) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
      this.store.discard(id);
      if (err instanceof JSONSplitError) bad(`request body is not a valid batch: ${err.message}`);
      if (err instanceof HttpError && (err.status === 413 || size < declared)) {
        // Answer without reading the rest of a body we refuse.
        ctx.res.setHeader('connection', 'close');
      }
      throw err;
    }
  }

  list(ctx: Ctx): void {
    const q = ctx.url.searchParams;
    const limitRaw = q.get('limit');
    let limit = 20;
    if (limitRaw !== null) {
      if (!/^\d+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100) bad('invalid list query: limit must be an integer from 1 to 100');
      limit = Number(limitRaw);
    }
    const statuses = q.getAll('status');
    for (const s of statuses) {
      if (s === 'finalizing' || s === 'cancelling') bad(`invalid list query: status "${s}" cannot be filtered on: stored jobs collapse it into in_progress`);
      if (!LISTABLE.includes(s)) bad(`invalid list query: status must be one of ${LISTABLE.join(', ')}`);
    }
    const bound = (name: string): number | undefined => {
      const v = q.get(name);
      if (v === null) return undefined;
      if (!/^\d+$/.test(v)) bad(`invalid list query: ${name} must be digits only (a Unix timestamp)`);
      return Number(v);
    };
    const after = q.get('after');
    if (after !== null && after === '') bad('invalid list query: after must not be empty');
    const createdAfter = bound('created_after');
    const createdBefore = bound('created_before');
    const collapse = (s: BatchStatus) => (s === 'finalizing' || s === 'cancelling' ? 'in_progress' : s);
    let items = this.store
      .all()
      .filter((r) => r.workspace === ctx.workspace)
      .filter((r) => statuses.length === 0 || statuses.includes(collapse(r.status)))
      .filter((r) => createdAfter === undefined || r.created_at > createdAfter)
      .filter((r) => createdBefore === undefined || r.created_at < createdBefore)
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
    if (after !== null) {
      const at = items.findIndex((r) => r.id === after);
      if (at === -1) bad(`invalid list query: after "${after}" is not a batch of this listing`);
      items = items.slice(at + 1);
    }
    const page = items.slice(0, limit);
    ctx.send(200, {
      object: 'list',
      data: page.map(publicBatch),
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: items.length > limit,
    });
  }

  async get(ctx: Ctx): Promise<void> {
    const record = this.store.get(ctx.params.id!);
    if (!record || record.workspace !== ctx.workspace) throw new HttpError(404, `No batch found with id ${ctx.params.id}`, 'not_found');
    if (this.now() - record.created_at >= RETENTION_SECONDS) {
      if (!record.results_deleted) this.store.deleteResults(record);
      throw new HttpError(410, `The results of batch ${record.id} were deleted 30 days after it was created`, 'not_found');
    }
    this.expireIfLate(record);
    const terminal = TERMINAL.includes(record.status);
    if (terminal && record.payment_due !== null) {
      if (ctx.store.balance(record.workspace) >= record.payment_due) {
        ctx.store.debit(record.workspace, record.payment_due);
        record.payment_due = null;
        this.store.save(record);
      } else {
        ctx.send(402, {
          ...publicBatch(record),
          results: null,
          error: { code: 402, message: `The finalized cost of the batch ($${record.payment_due}) exceeds the available balance`, metadata: { error_type: 'payment_required' } },
        });
        return;
      }
    }
    if (!terminal) {
      ctx.send(200, publicBatch(record));
      return;
    }
    await this.streamWithResults(ctx, record);
  }

  /** The batch object with its results, streamed from disk (results can be hundreds of MB). */
  private async streamWithResults(ctx: Ctx, record: BatchRecord): Promise<void> {
    const res = ctx.res;
    const head = JSON.stringify(publicBatch(record));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`${head.slice(0, -1)},"results":[`);
    let first = true;
    let carry = '';
    const stream = createReadStream(this.store.path(record.id, 'results.jsonl'), { highWaterMark: 256 * 1024 });
    stream.on('error', () => {});
    const writeOut = async (text: string) => {
      if (!text) return;
      if (!res.write(text)) await drainOrClose(res);
    };
    try {
      for await (const chunk of stream) {
        const text = carry + (chunk as Buffer).toString('utf8');
        const end = text.lastIndexOf('\n');
        if (end === -1) {
          carry = text;
          continue;
        }
        carry = text.slice(end + 1);
        const body = text.slice(0, end).split('\n').filter(Boolean).join(',');
        if (body) {
          await writeOut(first ? body : `,${body}`);
          first = false;
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    res.end(']}');
  }

  private expireIfLate(record: BatchRecord): void {
    if (!TERMINAL.includes(record.status) && this.now() - record.created_at > WINDOW_SECONDS) {
      record.status = 'expired';
      record.finalized_at = this.now();
      record.error = { message: 'The batch did not complete within the 24h completion window' };
      this.store.save(record);
    }
  }

  private sleep(): Promise<void> {
    // Unref'd: a pending pause must not keep a stopping emulator alive.
    return new Promise((r) => setTimeout(r, this.opts.delayMs).unref());
  }

  private transition(record: BatchRecord, status: BatchStatus, patch: Partial<BatchRecord> = {}): void {
    Object.assign(record, patch, { status });
    if (TERMINAL.includes(status)) record.finalized_at = this.now();
    this.store.save(record);
  }

  /** Drives one batch to a terminal status; safe to call again after a restart. */
  run(id: string): void {
    if (this.running.has(id)) return;
    this.running.add(id);
    this.drive(id)
      .catch((err) => {
        const record = this.store.get(id);
        if (record && !this.stopped) this.transition(record, 'failed', { error: { message: `internal error: ${(err as Error).message}` } });
      })
      .finally(() => this.running.delete(id));
  }

  private async drive(id: string): Promise<void> {
    const record = this.store.get(id)!;
    if (record.status === 'validating') {
      await this.sleep();
      if (this.stopped) return;
      const problem = await this.validateRequests(record);
      if (this.stopped) return;
      if (problem) return this.transition(record, 'failed', { error: { message: problem } });
      this.transition(record, 'in_progress');
    }
    if (record.status === 'in_progress') {
      const done = await this.store.completedResults(id);
      const doneIds = new Set(done.map((r) => r.custom_id as string));
      const usage = emptyUsage();
      record.request_counts.completed = 0;
      record.request_counts.failed = 0;
      for (const r of done) this.count(record, r, usage);
      const writer = this.store.openResults(id);
      try {
        for await (const req of this.store.requests(id)) {
          if (doneIds.has(req.custom_id)) continue;
          if (this.opts.delayMs) await this.sleep();
          if (this.stopped) return;
          this.expireIfLate(record);
          if ((record.status as BatchStatus) === 'expired') return;
          const item = this.execute(record, req.custom_id, req.body);
          writer.append(item);
          this.count(record, item, usage);
        }
      } finally {
        writer.close();
      }
      if (this.stopped) return;
      this.transition(record, 'finalizing', { usage: finishUsage(usage) });
      await this.sleep();
    }
    if (record.status === 'finalizing') {
      const cost = record.usage?.cost ?? 0;
      const ws = record.workspace;
      let payment_due: number | null = null;
      if (this.state.balance(ws) >= cost) this.state.debit(ws, cost);
      else payment_due = cost;
      this.transition(record, 'completed', { payment_due });
    }
  }

  private count(record: BatchRecord, item: Body, usage: BatchUsage): void {
    const response = item.response as { body: Body } | null;
    if (item.error || !response) {
      record.request_counts.failed++;
      return;
    }
    record.request_counts.completed++;
    const u = (response.body.usage ?? {}) as Body;
    const prompt = (u.prompt_tokens ?? u.input_tokens ?? 0) as number;
    const completion = (u.completion_tokens ?? u.output_tokens ?? 0) as number;
    usage.prompt_tokens += prompt;
    usage.completion_tokens += completion;
    usage.total_tokens += prompt + completion;
    usage.cost += ((u.cost as number | undefined) ?? 0) * BATCH_DISCOUNT;
  }

  /** The checks a batch gets while `validating`: the first problem fails the whole batch. */
  private async validateRequests(record: BatchRecord): Promise<string | undefined> {
    for await (const { custom_id, body } of this.store.requests(record.id)) {
      if (body.model !== undefined && body.model !== record.model) {
        return `request ${custom_id}: body.model ${JSON.stringify(body.model)} does not equal the batch model "${record.model}"`;
      }
      const nonText = nonTextPart(record.endpoint, body);
      if (nonText) return `request ${custom_id}: ${nonText}; batches are text only`;
    }
    return undefined;
  }

  private execute(record: BatchRecord, customId: string, rawBody: Body): Body {
    const body: Body = { ...rawBody, model: record.model };
    if (record.provider) body.provider = { ...(body.provider as Body | undefined), ...record.provider };
    const requestId = `req_${randomBytes(10).toString('hex')}`;
    const id = `batch_req_${randomBytes(12).toString('hex')}`;
    const created = this.now();
    try {
      let response: Body;
      if (record.endpoint === '/v1/chat/completions') {
        response = chatCompletion(body, planChat(body), created, { id: genId('gen-batch') });
      } else if (record.endpoint === '/v1/embeddings') {
        delete body.provider;
        response = planEmbeddings(body, { batch: true }).response;
      } else if (record.endpoint === '/v1/responses') {
        response = planResponses(body, created).result;
      } else {
        response = messagesResult(body, created);
      }
      return { id, custom_id: customId, response: { status_code: 200, request_id: requestId, body: response }, error: null };
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return {
        id,
        custom_id: customId,
        response: null,
        error: { type: err.status === 400 ? 'invalid_request_error' : 'api_error', message: err.message, param: null, error_type: err.errorType ?? errorTypeFor(err.status) },
      };
    }
  }
}

function emptyUsage(): BatchUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0, is_byok: false };
}

function finishUsage(u: BatchUsage): BatchUsage {
  return {
    ...u,
    cost: round(u.cost),
    prompt_tokens_details: { audio_tokens: 0, cache_write_tokens: 0, cached_tokens: 0, file_tokens: 0, video_tokens: 0 },
    completion_tokens_details: { audio_tokens: 0, image_tokens: 0, reasoning_tokens: 0 },
  };
}

const NON_TEXT_PARTS = ['image_url', 'input_audio', 'file', 'input_image', 'input_file', 'image', 'document', 'video_url'];

function nonTextPart(endpoint: string, body: Body): string | undefined {
  const partsOf = (list: unknown): unknown[] =>
    Array.isArray(list) ? list.flatMap((m) => (m && typeof m === 'object' && Array.isArray((m as Body).content) ? ((m as Body).content as unknown[]) : [])) : [];
  const parts = endpoint === '/v1/responses' ? partsOf(body.input) : partsOf(body.messages);
  const found = parts.find((p) => p && typeof p === 'object' && NON_TEXT_PARTS.includes((p as Body).type as string));
  if (found) return `content part of type "${(found as Body).type}" is not allowed`;
  if (endpoint === '/v1/chat/completions') {
    const mods = body.modalities;
    if (Array.isArray(mods) && mods.some((m) => m !== 'text')) return 'modalities other than text are not allowed';
    if (body.audio !== undefined || body.image_config !== undefined) return 'audio and image_config are not allowed';
  }
  return undefined;
}

function messagesResult(body: Body, created: number): Body {
  if (!Array.isArray(body.messages) || body.messages.length === 0) bad('messages must be a non-empty array');
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) bad('max_tokens is required (an integer >= 1)');
  const chatBody: Body = { ...body, messages: [...(typeof body.system === 'string' ? [{ role: 'system', content: body.system }] : []), ...(body.messages as Body[])] };
  const completion = chatCompletion(chatBody, planChat(chatBody), created);
  const choice = (completion.choices as Body[])[0]!;
  const usage = completion.usage as Body;
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content: [{ type: 'text', text: textOf((choice.message as Body).content) }],
    stop_reason: choice.finish_reason === 'length' ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    stop_details: null,
    usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, cost: usage.cost },
    container: null,
    input_transformations: [],
  };
}

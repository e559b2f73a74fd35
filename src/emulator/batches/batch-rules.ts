import { randomHex } from '../http/ids.js';
import { HttpError } from '../http/http.js';
import { TERMINAL, type BatchRecord, type BatchUsage } from '../state/batch-store.js';
import { findModel, MODEL_ID_PATTERN, round } from '../models/models.js';
import { knownProvider } from '../http/validate.js';
import type { BatchGateway } from '../providers/types.js';
import type { KeptGeneration } from '../state/store-api.js';
import { batchEmbeddingsProblem } from '../resources/embedding-input.js';

/*
 * The batch rules as the emulator states them itself (apart from the client's facts.ts: it is the
 * independent side that the conformance suite checks the CLI against).
 */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'];
/** The spec's 200 MB: 200,000,000 bytes. */
export const MAX_BATCH_BYTES = 200_000_000;
export const MAX_BATCH_REQUESTS = 5000;
export const DAY = 86_400;
export const RETENTION_SECONDS = 30 * DAY;
export const WINDOW_SECONDS = DAY;
export const LISTABLE = ['validating', 'in_progress', 'completed', 'failed', 'expired', 'cancelled'];
/** Batches are billed at half the per-token price. */
export const BATCH_DISCOUNT = 0.5;

export type Body = Record<string, unknown>;

let lastIdMs = 0;
/** Ids grow as batches are made, two in one millisecond too: a listing orders a second's batches by id. */
export function newBatchId(): string {
  lastIdMs = Math.max(Date.now(), lastIdMs + 1);
  return `batch_${lastIdMs.toString(36)}${randomHex(8)}`;
}

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
    // The spec's row is `object`, never null: all zeros until a request has run.
    usage: r.usage ?? finishUsage(emptyUsage()),
  };
}

export function bad(message: string): never {
  throw new HttpError(400, message, 'invalid_request');
}

function modelKindFor(endpoint: string) {
  return endpoint === '/v1/embeddings' ? 'embedding' : 'chat';
}

/** Checks of the batch's own fields, made once the upload is complete. */
export function checkBatchFields(rest: Body, gateway?: BatchGateway): { endpoint: string; model: string; provider: BatchRecord['provider'] } {
  const endpoint = rest.endpoint;
  if (typeof endpoint !== 'string' || !BATCH_ENDPOINTS.includes(endpoint)) bad(`endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  const model = rest.model;
  if (typeof model !== 'string' || model === '') bad('model must be a non-empty string');
  if (!MODEL_ID_PATTERN.test(model)) bad(`model must look like <author>/<slug>, got ${JSON.stringify(model)}`);
  const upstream = !!gateway?.serves(model, endpoint);
  const spec = upstream ? undefined : findModel(model);
  if (!upstream && (!spec || spec.kind !== modelKindFor(endpoint))) bad(`${model} is not a valid model ID for ${endpoint}`);
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
      const notAllowed = spec && only.find((slug) => !knownProvider(slug) || !spec.providers.includes(slug));
      if (notAllowed) throw new HttpError(403, `Provider "${notAllowed}" is not allowed for ${model}`, 'permission_denied');
    }
    provider = { ...(only ? { only } : {}), ...(p.allow_fallbacks !== undefined ? { allow_fallbacks: p.allow_fallbacks as boolean } : {}) };
  }
  return { endpoint, model, provider };
}

/** Adds one result item to the batch's counts and usage (batches are billed at a discount). */
export function countItem(record: BatchRecord, item: Body, usage: BatchUsage): void {
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
  usage.cost += itemCharge(item);
}

/**
 * A request's answer as its batch result carries it: `usage.cost` (and its `cost_details`) at the
 * batch price, as the service's `usage.cost` is "the amount charged" (deployment notes).
 */
export function atBatchPrice(body: Body): Body {
  const u = body.usage as Body | undefined;
  if (!u || typeof u !== 'object' || typeof u.cost !== 'number' || !Number.isFinite(u.cost)) return body;
  const usage: Body = { ...u, cost: round(u.cost * BATCH_DISCOUNT) };
  if (u.cost_details && typeof u.cost_details === 'object') {
    usage.cost_details = Object.fromEntries(Object.entries(u.cost_details as Body).map(([k, v]) => [k, typeof v === 'number' ? round(v * BATCH_DISCOUNT) : v]));
  }
  return { ...body, usage };
}

/** What one result item is charged: its `usage.cost`, already at the batch price (a batch's cost is their sum); a failed item nothing. */
export function itemCharge(item: Body): number {
  const response = item.response as { body: Body } | null;
  if (item.error || !response) return 0;
  const cost = ((response.body.usage ?? {}) as Body).cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? round(cost) : 0;
}

/**
 * Stored results as they were charged. A build before results carried the batch price (stop 59)
 * saved each result's `usage.cost` at the list price and charged half of it, as the request's kept
 * generation says (`total_cost`); a batch it saved mid-run, driven on by this build, had those counted
 * at the list price. A result whose generation was charged half its `usage.cost` is taken repriced, as
 * a result is written now (atBatchPrice); one whose generation is no longer kept is taken as saved.
 */
export function asCharged(kept: { generation(id: string): KeptGeneration | undefined }, items: Body[]): Body[] {
  return items.map((item) => {
    const response = item.response as { body?: Body } | null;
    const body = response?.body;
    const cost = itemCharge(item);
    if (!body || cost <= 0 || typeof body.id !== 'string') return item;
    const charged = kept.generation(body.id)?.data.total_cost;
    if (typeof charged !== 'number' || charged >= cost || Math.abs(charged - cost * BATCH_DISCOUNT) > 1e-10) return item;
    return { ...item, response: { ...response, body: atBatchPrice(body) } };
  });
}

export function emptyUsage(): BatchUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0, is_byok: false };
}

export function finishUsage(u: BatchUsage): BatchUsage {
  return {
    ...u,
    cost: round(u.cost),
    prompt_tokens_details: { audio_tokens: 0, cache_write_tokens: 0, cached_tokens: 0, file_tokens: 0, video_tokens: 0 },
    completion_tokens_details: { audio_tokens: 0, image_tokens: 0, reasoning_tokens: 0 },
  };
}

const NON_TEXT_PARTS = ['image_url', 'input_audio', 'file', 'input_image', 'input_file', 'image', 'document', 'video_url'];

export function nonTextPart(endpoint: string, body: Body): string | undefined {
  const list = (v: unknown): Body[] => (Array.isArray(v) ? v.filter((x): x is Body => !!x && typeof x === 'object') : []);
  // A tool's output may hold parts too: an Anthropic tool_result's content, a Responses function_call_output's output.
  const withToolParts = (parts: Body[]): Body[] => [...parts, ...parts.flatMap((p) => (p.type === 'tool_result' ? list(p.content) : []))];
  const partsOf = (items: unknown): Body[] => withToolParts(list(items).flatMap((m) => list(m.content)));
  // A Responses input item may be a part itself (`{type: "input_image", …}`), not in a message.
  const items = list(body.input);
  const parts = endpoint === '/v1/responses' ? [...partsOf(items), ...items, ...items.flatMap((i) => (i.type === 'function_call_output' ? list(i.output) : []))] : partsOf(body.messages);
  const found = parts.find((p) => NON_TEXT_PARTS.includes(p.type as string));
  if (found) return `content part of type "${found.type}" is not allowed`;
  if (endpoint === '/v1/embeddings') return batchEmbeddingsProblem(body);
  if (endpoint === '/v1/chat/completions') {
    const mods = body.modalities;
    if (Array.isArray(mods) && mods.some((m) => m !== 'text')) return 'modalities other than text are not allowed';
    if (body.audio !== undefined || body.image_config !== undefined) return 'audio and image_config are not allowed';
  }
  return undefined;
}

/** The counts and usage of the results written so far (counted afresh: after a restart, the saved ones may lag). */
export function recount(record: BatchRecord, done: Record<string, unknown>[]): BatchUsage {
  const usage = emptyUsage();
  record.request_counts.completed = 0;
  record.request_counts.failed = 0;
  for (const item of done) countItem(record, item, usage);
  return usage;
}

/** A batch's charge is made once, under this key (state.json keeps it while the batch may still be charged). */
export const chargeKey = (record: BatchRecord) => `batch:${record.id}`;
/** Ended and owing nothing, with that saved: its charge key is never asked again. */
export const settled = (record: BatchRecord) => TERMINAL.includes(record.status) && record.payment_due === null;
/** Whether what its requests cost was charged: each as it was answered (over providers), else all once it ended and was paid. */
export const paidFor = (record: BatchRecord) => record.held === true || settled(record);

/**
 * For one pass over the kept generations (activity, analytics): whether one's cost was charged. A
 * fake models' batch is charged once it ended and the balance covers it (Get answers 402 until then):
 * its requests count from then. Each batch is looked up once.
 */
export function chargedGenerations(batches: { get(id: string): BatchRecord | undefined }): (g: { batch?: string }) => boolean {
  const paid = new Map<string, boolean>();
  return ({ batch }) => {
    if (batch === undefined) return true;
    let known = paid.get(batch);
    if (known === undefined) {
      const record = batches.get(batch);
      paid.set(batch, (known = !record || paidFor(record)));
    }
    return known;
  };
}

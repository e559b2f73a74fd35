import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { bad as badRequest } from '../http/validate.js';
import { KeptContents, type ContentToKeep, type KeptContent } from '../state/kept-contents.js';
import type { Store } from '../state/store-api.js';

type Body = Record<string, unknown>;

/** A generation's stored content, in the OpenAPI's `GenerationContentData` shape. */
export interface GenerationContent {
  input: { messages: unknown[] } | { prompt: string };
  output: { completion: string | null; reasoning: string | null };
  error: { message: string | null; provider_name: string | null; raw: string | null; status: number | null; previous_errors: unknown[] } | null;
}

/** Contents kept: the newest this many per store, in memory (a restart, or an older one, is a 404: not stored)... */
const KEEP = 1_000;
/** ...and in at most about this many bytes (the request's body and the answer's text): 1,000 bodies of 32 MiB were 32 GB. */
export const CONTENT_BYTES = 16 * 1024 * 1024;
const contents = new WeakMap<object, KeptContents>();

/**
 * Keeps what a fake model's generation was asked and answered, for `GET /v1/generation/content`: the
 * request (the JSON `ctx.json()` parsed, its bytes), the answer's text and reasoning, and the error a
 * fault's cut ended it with (its completion then not stored). Nothing is kept for a request whose
 * body was not parsed.
 */
export function keepContent(ctx: Ctx, id: string, completion: string | null, reasoning: string | null, failed?: { provider: string }): void {
  const asked = ctx.bodyRaw;
  if (asked === undefined) return;
  keepIn(ctx.store, id, { workspace: ctx.workspace, asked, completion: failed ? null : completion, reasoning: failed ? null : reasoning, failedBy: failed?.provider }, ctx.bodyBytes);
}

/**
 * Keeps what a batch request was asked (its body as run) and answered, under its generation's id, in
 * the same bounds as calls' contents: the service keeps a batch's inputs and results (30 days, the
 * deployed notes say), and its generations answer `GET /v1/generation`.
 */
export function keepBatchContent(store: Store, workspace: string, id: string, body: Record<string, unknown>, completion: string | null, reasoning: string | null): void {
  const asked = JSON.stringify(body);
  keepIn(store, id, { workspace, asked, completion, reasoning, failedBy: undefined }, Buffer.byteLength(asked));
}

function keepIn(store: Store, id: string, content: ContentToKeep, askedBytes: number): void {
  let kept = contents.get(store);
  if (!kept) contents.set(store, (kept = new KeptContents(KEEP, CONTENT_BYTES)));
  kept.keep(id, content, askedBytes + (content.completion?.length ?? 0) + (content.reasoning?.length ?? 0));
}

/** A kept content in the OpenAPI's shape: the request's messages (a chat's; a Responses input's items, or its text as `prompt`). */
function contentData(kept: KeptContent): GenerationContent {
  const asked = JSON.parse(kept.asked) as Body;
  const items = Array.isArray(asked.messages) ? asked.messages : Array.isArray(asked.input) ? asked.input : undefined;
  const input = items ? { messages: items } : { prompt: typeof asked.input === 'string' ? asked.input : '' };
  const error = kept.failedBy === undefined ? null : { message: 'Provider returned an error mid-stream', provider_name: kept.failedBy, raw: null, status: 502, previous_errors: [] };
  return { input, output: { completion: kept.completion, reasoning: kept.reasoning }, error };
}

const CATEGORIES = ['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other'];

/** What a workspace's generation was told in feedback (the emulator keeps it, and does nothing with it). */
export const feedback = new WeakMap<object, { generation_id: string; category: string; comment?: string }[]>();

/**
 * `GET /v1/generation/content?id=` (management key): the stored prompt and completion of a generation
 * of this workspace (404 for another's, or one whose content is not stored). `POST /v1/generation/feedback`
 * (management key): `{ generation_id, category, comment? }` on one of this workspace's generations.
 */
export const generationContentRoutes = defineRoutes(() => [
  {
    method: 'GET',
    path: '/v1/generation/content',
    access: 'management',
    handler: async (ctx: Ctx) => {
      const id = ctx.url.searchParams.get('id');
      if (!id) throw new HttpError(400, 'the id query parameter is required', 'invalid_request');
      const kept = contents.get(ctx.store)?.get(id);
      if (!kept || kept.workspace !== ctx.workspace) throw new HttpError(404, `No stored content for generation ${id}`, 'not_found');
      ctx.send(200, { data: contentData(kept) });
    },
  },
  {
    method: 'POST',
    path: '/v1/generation/feedback',
    access: 'management',
    handler: async (ctx: Ctx) => {
      const body = await ctx.json();
      const { generation_id: id, category, comment } = body;
      if (typeof id !== 'string' || !id) badRequest('generation_id must be a non-empty string');
      if (typeof category !== 'string' || !CATEGORIES.includes(category)) badRequest(`category must be one of ${CATEGORIES.join(', ')}`);
      if (comment !== undefined && (typeof comment !== 'string' || comment.length > 1000)) badRequest('comment must be a string of at most 1000 characters');
      const generation = ctx.store.generation(id);
      if (!generation || generation.workspace !== ctx.workspace) throw new HttpError(404, `Generation ${id} not found`, 'not_found');
      const told = feedback.get(ctx.store) ?? [];
      feedback.set(ctx.store, told);
      told.push({ generation_id: id, category, ...(comment === undefined ? {} : { comment }) });
      if (told.length > KEEP) told.shift();
      ctx.send(200, { data: { success: true } });
    },
  },
]);

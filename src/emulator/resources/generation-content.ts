import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { bad as badRequest } from '../http/validate.js';

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
interface Kept {
  workspace: string;
  content: GenerationContent;
  bytes: number;
}
const contents = new WeakMap<object, { byId: Map<string, Kept>; bytes: number }>();

/**
 * Keeps what a fake model's generation was asked and answered, for `GET /v1/generation/content`: the
 * request's messages (a chat's; a Responses input's items, or its text as `prompt`), the answer's text
 * and reasoning, and the error a fault's cut ended it with (its completion then not stored).
 */
export function keepContent(ctx: Ctx, id: string, asked: Body, completion: string | null, reasoning: string | null, failed?: { provider: string }): void {
  let kept = contents.get(ctx.store);
  if (!kept) contents.set(ctx.store, (kept = { byId: new Map(), bytes: 0 }));
  const items = Array.isArray(asked.messages) ? asked.messages : Array.isArray(asked.input) ? asked.input : undefined;
  const input = items ? { messages: items } : { prompt: typeof asked.input === 'string' ? asked.input : '' };
  const error = failed ? { message: 'Provider returned an error mid-stream', provider_name: failed.provider, raw: null, status: 502, previous_errors: [] } : null;
  const output = { completion: failed ? null : completion, reasoning: failed ? null : reasoning };
  const bytes = ctx.bodyBytes + (output.completion?.length ?? 0) + (output.reasoning?.length ?? 0);
  const again = kept.byId.get(id);
  if (again) kept.bytes -= again.bytes;
  kept.byId.delete(id);
  kept.byId.set(id, { workspace: ctx.workspace, content: { input, output, error }, bytes });
  kept.bytes += bytes;
  // The oldest go first; one larger than the budget alone is not kept either.
  while (kept.byId.size > KEEP || kept.bytes > CONTENT_BYTES) {
    const [oldest, was] = kept.byId.entries().next().value!;
    kept.byId.delete(oldest);
    kept.bytes -= was.bytes;
  }
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
      const kept = contents.get(ctx.store)?.byId.get(id);
      if (!kept || kept.workspace !== ctx.workspace) throw new HttpError(404, `No stored content for generation ${id}`, 'not_found');
      ctx.send(200, { data: kept.content });
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

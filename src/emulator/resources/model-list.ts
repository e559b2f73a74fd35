import { HttpError } from '../http/http.js';
import { MODELS, type ModelKind, type ModelSpec } from '../models/models.js';
import { decimal } from '../../internal/decimal.js';
import { CHAT_PARAMETERS, TOOL_PARAMETERS } from '../models/parameters.js';

/** What each kind of model takes and gives, as the model list's `architecture` says it; a chat model's own `input`/`output` widen it. */
const ARCHITECTURE: Record<ModelKind, { input_modalities: string[]; output_modalities: string[] }> = {
  chat: { input_modalities: ['text'], output_modalities: ['text'] },
  embedding: { input_modalities: ['text'], output_modalities: ['embeddings'] },
  speech: { input_modalities: ['text'], output_modalities: ['speech'] },
  decision: { input_modalities: ['text'], output_modalities: ['text'] },
};

/** What a fake model honours beyond every chat model's parameters. */
const EXTRA_PARAMETERS: Record<string, string[]> = {
  'local/tools': TOOL_PARAMETERS,
  'local/thinker': ['reasoning', 'reasoning_effort', 'include_reasoning'],
};

function modalities(m: ModelSpec): { input_modalities: string[]; output_modalities: string[] } {
  const base = ARCHITECTURE[m.kind];
  if (m.kind !== 'chat') return base;
  return { input_modalities: [...new Set(['text', ...(m.input ?? [])])], output_modalities: m.output ?? base.output_modalities };
}

/** The context a model takes: 131,072 tokens, and twice its longest answer where that is more (an answer is within its context). */
const contextLength = (m: ModelSpec) => Math.max(131_072, 2 * (m.maxOutputTokens ?? 0));
/** 2026-01-01: when the local models were made. */
const CREATED = 1_767_225_600;

/**
 * One model as `GET /v1/models` lists it, in the OpenAPI's `Model` shape. Everything is derived from
 * the catalog's fields; an entry's `listing` overrides any of it.
 */
export function listedModel(m: ModelSpec): Record<string, unknown> {
  const { input_modalities, output_modalities } = modalities(m);
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.id,
    created: CREATED,
    description: `${m.kind} model of the local emulator`,
    context_length: contextLength(m),
    architecture: { modality: `${input_modalities.join('+')}->${output_modalities.join('+')}`, input_modalities, output_modalities, tokenizer: 'Other', instruct_type: null },
    pricing: { prompt: decimal(m.promptPrice), completion: decimal(m.completionPrice) },
    top_provider: { context_length: contextLength(m), max_completion_tokens: m.maxOutputTokens ?? null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: m.kind !== 'chat' ? [] : (m.parameters ?? [...CHAT_PARAMETERS, ...(EXTRA_PARAMETERS[m.id] ?? [])]),
    default_parameters: null,
    supported_voices: m.voices ?? null,
    knowledge_cutoff: null,
    expiration_date: null,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
    ...m.listing,
  };
}

/** Models per page when the query names an `offset` and no `limit`: the real service's default. */
export const DEFAULT_PAGE_SIZE = 500;
const MAX_LIMIT = 1000;

function whole(url: URL, name: string, min: number, max: number): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

/** Whether a listed model gives one of the output modalities asked (`all`, or a comma list; `text` by default). */
function givesAny(model: Record<string, unknown>, asked: string): boolean {
  if (asked === 'all') return true;
  const gives = (model.architecture as { output_modalities: string[] }).output_modalities;
  return asked.split(',').some((m) => gives.includes(m.trim()));
}

/** The listed models that give what the query's `output_modalities` asks (`text` when it names none). */
export const matchingModels = (url: URL, listed: Record<string, unknown>[] = MODELS.map(listedModel)) => listed.filter((m) => givesAny(m, url.searchParams.get('output_modalities') || 'text'));

/**
 * A page of the model list: `offset` and `limit` (1 to 1000, 500 when only `offset` is given) as the
 * OpenAPI has them; when neither is given, the whole list (the OpenAPI: "the full list is returned"),
 * or pages of `pageSize` when the operator set one (`listed`: a gateway's models instead of the fake
 * ones); `links.next` is the next page's path from the host, null on the last page.
 * `GET /v1/embeddings/models` is the same list of the embedding models (`list`: 'embeddings/models');
 * `GET /v1/models/user` the same as `/v1/models` (the emulator keeps no provider preferences to filter by).
 */
export function modelPage(url: URL, pageSize: number | undefined, listed: Record<string, unknown>[] = MODELS.map(listedModel), list: 'models' | 'models/user' | 'embeddings/models' = 'models'): Record<string, unknown> {
  const embeddings = list === 'embeddings/models';
  const asked = { offset: whole(url, 'offset', 0, Number.MAX_SAFE_INTEGER), limit: whole(url, 'limit', 1, MAX_LIMIT) };
  const matching = embeddings ? listed.filter((m) => givesAny(m, 'embeddings')) : matchingModels(url, listed);
  const offset = asked.offset ?? 0;
  const limit = asked.limit ?? pageSize ?? (asked.offset === undefined ? Infinity : DEFAULT_PAGE_SIZE);
  const end = offset + limit;
  let next: string | null = null;
  if (end < matching.length) {
    const query = new URLSearchParams(url.searchParams);
    query.set('offset', String(end));
    query.set('limit', String(limit));
    next = `/api/v1/${list}?${query}`;
  }
  return { data: matching.slice(offset, end), total_count: matching.length, links: { next } };
}

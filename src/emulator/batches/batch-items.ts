import { randomHex } from '../http/ids.js';
import { HttpError, errorTypeFor } from '../http/http.js';
import { errorBodyFor, messagesErrorType } from '../resources/messages-errors.js';
import type { BatchRecord } from '../state/batch-store.js';
import { chatCompletion, genId, planChat } from '../resources/chat.js';
import { textOf } from '../models/content-text.js';
import { chatBodyOf, messageOf } from '../resources/messages-format.js';
import { planEmbeddings } from '../resources/embeddings.js';
import { planResponses } from '../resources/responses.js';
import { atBatchPrice, itemCharge, type Body } from './batch-rules.js';
import { generationData } from '../resources/generations.js';
import { keepBatchContent } from '../resources/generation-content.js';
import { reasoningOf } from '../models/responses-reasoning.js';
import type { Store } from '../state/store-api.js';
import type { BatchGateway } from '../providers/types.js';
import type { FaultRule } from '../http/faults.js';

/** How many of a batch's requests run at once: several over providers (`batch_concurrency`; each result on disk as it arrives, in any order), else one. */
export function concurrencyOf(record: BatchRecord, gateway?: BatchGateway): number {
  return gateway?.serves(record.model, record.endpoint) ? gateway.batchConcurrency : 1;
}

/** A request's body as it is run: the batch's model, and its provider preferences over the request's. */
export function itemBody(record: BatchRecord, rawBody: Body): Body {
  const body: Body = { ...rawBody, model: record.model };
  if (record.provider) body.provider = { ...(body.provider as Body | undefined), ...record.provider };
  return body;
}

/** The `provider=` fault of a batch's create request (header or rule), kept with the batch; nothing for another fault or none. */
export function keptFault(fault: FaultRule | undefined): Pick<BatchRecord, 'provider_fault'> {
  if (fault?.provider === undefined) return {};
  return { provider_fault: { provider: fault.provider, status: fault.status!, ...(fault.retryAfter !== undefined && { retry_after: fault.retryAfter }) } };
}

/** The fault each request of the batch meets, as a direct call carrying it does (fake-route.ts, provider-fault.ts). */
function faultOf(record: BatchRecord): FaultRule | undefined {
  const kept = record.provider_fault;
  return kept && { kind: 'status', status: kept.status, provider: kept.provider, ...(kept.retry_after !== undefined && { retryAfter: kept.retry_after }) };
}

/** What executeItem tells of a request's answer beyond its body. */
export interface BatchServed {
  /** The provider that answered, where the answer's body does not name it (Responses, messages). */
  provider?: string;
  /** The id a provider gave an answer the result now carries under an id of the gateway's own (batchOwnId). */
  upstreamId?: string;
}

/**
 * A provider's answer under an id of the gateway's own, as its answers outside batches are (ownId):
 * `gen-batch-…` (chat, Responses), `emb-…` (embeddings), the provider's own kept in `served.upstreamId`
 * (the generation's `upstream_id`). A provider may repeat one id (Prism's `resp_abc123`) or send none
 * (OpenAI's embeddings): their results shared one generation, or had none. A chat answer on the tier
 * it reports, else `batch`, as its generation says (batchTier). A chat result's `service_tier` is "the
 * service tier used by the upstream provider", any string (ChatResult), unlike the request's list.
 */
function batchOwnId(answer: Body, endpoint: string, served: BatchServed): Body {
  if (typeof answer.id === 'string' && answer.id) served.upstreamId = answer.id;
  if (endpoint === '/v1/embeddings') return { ...answer, id: genId('emb') };
  const own = { ...answer, id: genId('gen-batch') };
  return endpoint === '/v1/chat/completions' ? { ...own, service_tier: answer.service_tier ?? 'batch' } : own;
}

/** Runs one request of a batch: a result item with the response, or with the error a request would get. */
export async function executeItem(record: BatchRecord, customId: string, rawBody: Body, created: number, gateway?: BatchGateway, served: BatchServed = {}): Promise<Body> {
  const body = itemBody(record, rawBody);
  const fault = faultOf(record);
  const requestId = `req_${randomHex(10)}`;
  const id = `batch_req_${randomHex(12)}`;
  try {
    let response: Body;
    if (gateway?.serves(record.model, record.endpoint) && record.endpoint === '/v1/messages') {
      const chat = chatBodyOf(body);
      const answer = await gateway.complete(chat, '/v1/chat/completions', served, fault);
      response = batchOwnId(messageOf(answer, typeof answer.service_tier === 'string' && answer.service_tier ? answer.service_tier : 'batch', chat.stop), record.endpoint, served);
    } else if (gateway?.serves(record.model, record.endpoint)) {
      response = batchOwnId(await gateway.complete(body, record.endpoint, served, fault), record.endpoint, served);
    } else if (record.endpoint === '/v1/chat/completions') {
      response = { ...chatCompletion(body, planChat(body, { fault }), created, { id: genId('gen-batch') }), service_tier: 'batch' };
    } else if (record.endpoint === '/v1/embeddings') {
      delete body.provider;
      response = (await planEmbeddings(body, { batch: true, at: { fault } })).response;
    } else if (record.endpoint === '/v1/responses') {
      const plan = planResponses(body, created, { fault });
      served.provider = plan.routed.provider;
      // Its tier's list (ServiceTier) has no `batch`, and the tier asked is not the one it ran on: none said.
      response = { ...plan.result, service_tier: null };
    } else {
      response = messagesResult(body, created, served, fault);
    }
    return { id, custom_id: customId, response: { status_code: 200, request_id: requestId, body: atBatchPrice(response) }, error: null };
  } catch (caught) {
    // Whatever goes wrong with one item is that item's failure, never the batch's or the emulator's.
    const err = caught instanceof HttpError ? caught : new HttpError(500, `the request could not be run: ${(caught as Error)?.message ?? String(caught)}`, 'server');
    return failedItem(record.endpoint, customId, err.status, err.message, err.errorType ?? errorTypeFor(err.status), id, requestId);
  }
}

/**
 * A failed request's result item. The spec's `response` row is an object, never null: its body is the
 * answer the request alone would get (a messages request's in Anthropic's error shape, its `error.type`
 * that answer's too; the others OpenAI's batch words: `invalid_request_error` for a 400, else `api_error`).
 */
export function failedItem(endpoint: string, customId: string, status: number, message: string, errorType: string, id = `batch_req_${randomHex(12)}`, requestId = `req_${randomHex(10)}`): Body {
  const type = endpoint === '/v1/messages' ? messagesErrorType(status, errorType) : status === 400 ? 'invalid_request_error' : 'api_error';
  return {
    id,
    custom_id: customId,
    response: { status_code: status, request_id: requestId, body: errorBodyFor(endpoint, status, message, errorType, requestId) },
    error: { type, message, param: null, error_type: errorType },
  };
}

/** A messages request of a batch run as the chat request it means (messages-format.ts), on a fake model. */
function messagesResult(body: Body, created: number, served: { provider?: string }, fault?: FaultRule): Body {
  const chatBody = chatBodyOf(body);
  const completion = chatCompletion(chatBody, planChat(chatBody, { fault }), created, { id: genId('gen-batch') });
  served.provider = completion.provider as string;
  // A batch's tier, as Anthropic's usage names it (AnthropicServiceTier: standard, priority, batch).
  return messageOf(completion, 'batch', chatBody.stop);
}

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The tier a batch request ran on: the one an upstream's answer reports (chat's `service_tier`, a
 * messages result's `usage.service_tier`), else `batch`. The service hands batches to its providers'
 * batch APIs at about half the price; the yaml's provider-reported tier (AnthropicServiceTier:
 * standard, priority, batch) names that tier `batch`, and the generation's `service_tier` is the one
 * "the upstream provider reported running this request on". A fake model's runs on `batch` (a batch
 * at half price is no `priority`), as its chat answer says too (executeItem).
 */
function batchTier(body: Body, usage: Body, upstream: boolean): string {
  if (!upstream) return 'batch';
  const reported = body.service_tier ?? usage.service_tier;
  return typeof reported === 'string' && reported ? reported : 'batch';
}

/**
 * Keeps a batch request's answer as a generation, found at `GET /v1/generation?id=` by the id its
 * body carries (a chat result's `gen-batch-…`), as the service keeps a batch's generations: its
 * model and provider, its tokens, what it is charged at the batch price, no session (a batch's
 * generations are not grouped by one), and its content for `GET /v1/generation/content` (the service
 * keeps a batch's inputs and results). A failed request, or a body without an id, is not kept.
 */
export function keepBatchGeneration(store: Store, record: BatchRecord, asked: Body, item: Body, served: BatchServed & { startedAt: number }, upstream: boolean): void {
  const response = item.response as { body?: Body; request_id?: unknown } | undefined;
  const body = response?.body;
  if (item.error || !body || typeof body.id !== 'string' || !body.id) return;
  const u = (body.usage && typeof body.usage === 'object' ? body.usage : {}) as Body;
  const details = (u.completion_tokens_details ?? u.output_tokens_details) as Body | undefined;
  const choice = (Array.isArray(body.choices) ? body.choices[0] : undefined) as Body | undefined;
  const finish = choice?.finish_reason ?? body.stop_reason ?? (body.status === 'completed' ? 'stop' : null);
  const data = generationData(
    {
      id: body.id,
      upstreamId: served.upstreamId,
      model: typeof body.model === 'string' ? body.model : record.model,
      provider: served.provider ?? (typeof body.provider === 'string' ? body.provider : ''),
      apiType: record.endpoint === '/v1/embeddings' ? 'embeddings' : 'completions',
      promptTokens: count(u.prompt_tokens ?? u.input_tokens),
      completionTokens: count(u.completion_tokens ?? u.output_tokens),
      reasoningTokens: count(details?.reasoning_tokens),
      cost: itemCharge(item),
      streamed: false,
      finishReason: typeof finish === 'string' ? finish : null,
      startedAt: served.startedAt,
      serviceTier: batchTier(body, u, upstream),
    },
    store.now(),
    { origin: '', userAgent: null, referer: null, requestId: typeof response?.request_id === 'string' ? response.request_id : '' },
  );
  store.keepGeneration(body.id, { workspace: record.workspace, key: record.key_hash, data, batch: record.id });
  const said = answerSaid(body);
  keepBatchContent(store, record.workspace, body.id, itemBody(record, asked), said.completion, said.reasoning);
}

/** A batch answer's text and reasoning, as generation content keeps them: chat's message, a Responses answer's output, a messages answer's text blocks. */
function answerSaid(body: Body): { completion: string | null; reasoning: string | null } {
  const message = ((Array.isArray(body.choices) ? body.choices[0] : undefined) as Body | undefined)?.message as Body | undefined;
  if (message) return { completion: message.content == null ? null : textOf(message.content), reasoning: typeof message.reasoning === 'string' ? message.reasoning : null };
  if (Array.isArray(body.output)) {
    const parts = (body.output as Body[]).filter((item) => item?.type === 'message').flatMap((item) => (Array.isArray(item.content) ? (item.content as Body[]) : []));
    return { completion: typeof body.output_text === 'string' ? body.output_text : textOf(parts), reasoning: reasoningOf(body) };
  }
  if (body.type === 'message' && Array.isArray(body.content)) return { completion: textOf(body.content), reasoning: null };
  return { completion: null, reasoning: null };
}

import { HttpCore, type ClientOptions } from './core.js';
import { Chat } from './resources/chat.js';
import { Batches, type BatchPlaceOptions } from './resources/batches.js';
import { Responses } from './resources/responses.js';
import { Embeddings } from './resources/embeddings.js';
import { Speech } from './resources/speech.js';
import { Decisions } from './resources/decisions.js';
import { Models } from './resources/models.js';
import { Key } from './resources/key.js';
import { Keys } from './resources/keys.js';
import { Activity } from './resources/activity.js';
import { Credits } from './resources/credits.js';
import { Raw } from './resources/raw.js';
import { Generations } from './resources/generations.js';
import { checkOptions, optionNames } from './option-names.js';
import { guardCalls } from './resource-calls.js';

export * from './errors.js';
export * from './types.js';
export * from './facts.js';
export { BATCH_PATHS, isNoListing, type BatchPlace, type BatchPlaceOptions } from './resources/batches.js';
export type { PlainHttpInfo } from './credentials.js';
export { DEFAULT_API_ROOT, HttpCore, parseRetryAfter, type Base, type ClientOptions, type ProxyOptions, type Query, type RawResponse, type RequestOptions, type RetryInfo } from './core.js';
export type { AnswerBody, Flow } from './answer-body.js';
export type { AnswerShape, FieldKind } from './answer-shape.js';
export { parseSSE, type FastPath, type SSEEvent } from './sse.js';
export { checkOptions, optionNames, pickOptions } from './option-names.js';
export { RESOURCE_CALLS, type Resources } from './resource-calls.js';
export type { AnsweringOptions, CallOptions, EventStream, EventStreamOptions, PlainCallOptions } from './resources/shared.js';
export type { QueryNames } from './query-names.js';
export type { Batches, BatchListQuery, BatchHead } from './resources/batches.js';
export type { Responses, ResponsesRequest, ResponsesResult, ResponsesEvent, ResponseLifecycleEvent, ResponseTextDeltaEvent, ResponseErrorEvent, ResponseOtherEvent } from './resources/responses.js';
export { decodeEmbedding, type Embeddings, type EmbeddingsRequest } from './resources/embeddings.js';
export { deltaText, type Chat, type ChatCreateOptions } from './resources/chat.js';
export { contentText, FailedAnswerError, outputText, readCompletion, readResponse, type AnswerReading } from './answer-reading.js';
export { MessageAssembler, messageOf, type AssembledMessage, type ToolCall } from './message-assembler.js';
export type { Model, Models } from './resources/models.js';
export type { Key, KeyInfo } from './resources/key.js';
export type { Activity, ActivityItem, ActivityQuery } from './resources/activity.js';
export type { ApiKey, CreatedKey, Keys, KeyCreate, KeyLimitReset, KeyListQuery, KeyUpdate } from './resources/keys.js';
export type { Generation, GenerationContent, GenerationFeedback, Generations } from './resources/generations.js';
export type { AccountCredits, Credits } from './resources/credits.js';
export type { Raw, RawRequest } from './resources/raw.js';
export type { DecisionOptions, Decisions } from './resources/decisions.js';
export type { Speech, SpeechRequest, SpeechTurn, SpeechReference, SpeechStream } from './resources/speech.js';

const CLIENT_OPTIONS = optionNames<ClientOptions & { batches?: BatchPlaceOptions | undefined }>()({ apiKey: 1, keyless: 1, apiRoot: 1, timeoutMs: 1, maxRetries: 1, userAgent: 1, headers: 1, onRetry: 1, onPlainHttp: 1, dispatcher: 1, proxy: 1, batches: 1 });

/** Typed client for the Model Routing Service API: one property per resource over one HTTP core. */
export class RouterClient {
  readonly core: HttpCore;
  readonly chat: Chat;
  readonly batches: Batches;
  readonly responses: Responses;
  readonly embeddings: Embeddings;
  readonly speech: Speech;
  readonly decisions: Decisions;
  readonly models: Models;
  /** The calling key: label, usage, limit. */
  readonly key: Key;
  /** The workspace's API keys: list, create, get, update, delete (a management key); `current()` any key's own. */
  readonly keys: Keys;
  /** What the workspace spent by day, model and endpoint, the last 30 days (a management key). */
  readonly activity: Activity;
  /** Needs a management key. */
  readonly credits: Credits;
  /** Any endpoint, as `router api` uses it. */
  readonly raw: Raw;
  /** What a call really cost, once it ran (`GET /v1/generation`). */
  readonly generations: Generations;

  constructor(opts: ClientOptions & { batches?: BatchPlaceOptions | undefined } = {}) {
    checkOptions('new RouterClient()', opts, CLIENT_OPTIONS);
    this.core = new HttpCore(opts);
    this.chat = new Chat(this.core);
    this.batches = new Batches(this.core, opts.batches);
    this.responses = new Responses(this.core);
    this.embeddings = new Embeddings(this.core);
    this.speech = new Speech(this.core);
    this.decisions = new Decisions(this.core);
    this.models = new Models(this.core);
    this.key = new Key(this.core);
    this.keys = new Keys(this.core);
    this.activity = new Activity(this.core);
    this.credits = new Credits(this.core);
    this.raw = new Raw(this.core);
    this.generations = new Generations(this.core);
    guardCalls(this);
  }

  close(): Promise<void> {
    return this.core.close();
  }
}

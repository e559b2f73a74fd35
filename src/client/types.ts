/** Wire types of the Model Routing Service API (see shared/spec/api.md). */

export type JSONObject = Record<string, unknown>;

export interface ProviderPreferences {
  order?: string[] | undefined;
  only?: string[] | undefined;
  ignore?: string[] | undefined;
  allow_fallbacks?: boolean | undefined;
  require_parameters?: boolean | undefined;
  data_collection?: 'allow' | 'deny' | undefined;
  zdr?: boolean | undefined;
  sort?: unknown;
  [key: string]: unknown;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'developer' | 'tool';
  content: string | null | unknown[];
  name?: string | undefined;
  [key: string]: unknown;
}

export interface ChatCompletionRequest {
  messages: ChatMessage[];
  model?: string | undefined;
  models?: string[] | undefined;
  max_tokens?: number | undefined;
  max_completion_tokens?: number | undefined;
  temperature?: number | undefined;
  top_p?: number | undefined;
  top_k?: number | undefined;
  min_p?: number | undefined;
  top_a?: number | undefined;
  frequency_penalty?: number | undefined;
  presence_penalty?: number | undefined;
  repetition_penalty?: number | undefined;
  logit_bias?: Record<string, number> | undefined;
  logprobs?: boolean | undefined;
  top_logprobs?: number | undefined;
  seed?: number | undefined;
  stop?: string | string[] | undefined;
  stream?: boolean | undefined;
  stream_options?: { include_usage?: boolean | undefined } | undefined;
  response_format?: JSONObject | undefined;
  tools?: JSONObject[] | undefined;
  tool_choice?: unknown;
  reasoning?: { effort?: string | undefined; summary?: string | undefined; enabled?: boolean | undefined } | undefined;
  reasoning_effort?: string | undefined;
  provider?: ProviderPreferences | undefined;
  session_id?: string | undefined;
  metadata?: Record<string, string> | undefined;
  trace?: JSONObject | undefined;
  user?: string | undefined;
  service_tier?: string | undefined;
  [key: string]: unknown;
}

export interface CostDetails {
  upstream_inference_cost: number | null;
  upstream_inference_prompt_cost: number;
  upstream_inference_completions_cost: number;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost?: number | undefined;
  cost_details?: CostDetails | undefined;
  is_byok?: boolean | undefined;
  prompt_tokens_details?: Record<string, number | null> | undefined;
  completion_tokens_details?: Record<string, number | null> | undefined;
  [key: string]: unknown;
}

/** Routing metadata: api.md's `router_metadata`, or the deployed service's `openrouter_metadata`. */
export interface RouterMetadata {
  attempt: number;
  endpoints: { available: { model: string; provider: string; selected: boolean }[]; total: number };
  generation_time?: number | undefined;
  is_byok: boolean;
  region: string | null;
  requested: string;
  strategy: string;
  summary: string;
  /** Each provider and model tried, with the HTTP status it answered (openrouter_metadata). */
  attempts?: { provider: string; model: string; status: number }[] | undefined;
  /** The stages the request went through: guardrails, plugins, server tools (openrouter_metadata). */
  pipeline?: { type: string; name: string; summary?: string | undefined; [key: string]: unknown }[] | undefined;
  [key: string]: unknown;
}

/** An answer's routing metadata under either name (`openrouter_metadata`, the richer shape, when both), if it carries one. */
export function routingMetadata(answer: { router_metadata?: unknown; openrouter_metadata?: unknown } | null | undefined): RouterMetadata | undefined {
  const m = answer?.openrouter_metadata ?? answer?.router_metadata;
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as RouterMetadata) : undefined;
}

export interface ChatChoice {
  index: number;
  message: { role: 'assistant'; content: string | JSONObject[] | null; refusal?: string | null | undefined; [key: string]: unknown };
  finish_reason: string | null;
  native_finish_reason: string | null;
  logprobs: JSONObject | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  provider?: string | null | undefined;
  system_fingerprint: string | null;
  service_tier?: string | null | undefined;
  choices: ChatChoice[];
  usage: ChatUsage;
  router_metadata?: RouterMetadata | undefined;
  openrouter_metadata?: RouterMetadata | undefined;
  [key: string]: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  provider?: string | undefined;
  system_fingerprint?: string | null | undefined;
  choices: {
    index: number;
    delta: { role?: 'assistant' | undefined; content?: string | null | undefined; reasoning?: string | null | undefined; [key: string]: unknown };
    finish_reason: string | null;
    native_finish_reason?: string | null | undefined;
    logprobs?: JSONObject | null | undefined;
  }[];
  usage?: ChatUsage | undefined;
  error?: { code: number | string; message: string; metadata?: { error_type?: string | undefined } | undefined } | undefined;
  router_metadata?: RouterMetadata | undefined;
  openrouter_metadata?: RouterMetadata | undefined;
}

export type BatchEndpoint = '/v1/chat/completions' | '/v1/responses' | '/v1/messages' | '/v1/embeddings';

export type BatchStatus =
  | 'validating'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';

export interface BatchRequestItem {
  custom_id: string;
  body: JSONObject;
}

export interface BatchCreateRequest {
  endpoint: BatchEndpoint;
  model: string;
  requests: BatchRequestItem[];
  completion_window?: '24h' | undefined;
  provider?: { only?: string[] | undefined; allow_fallbacks?: boolean | undefined } | undefined;
}

export interface BatchResultItem {
  id: string;
  custom_id: string;
  response: { body: JSONObject; request_id: string; status_code: number } | null;
  error: { type: string; message: string; param: string | null; error_type?: string | undefined } | null;
}

export interface Batch {
  id: string;
  object: 'batch';
  endpoint: BatchEndpoint;
  model: string;
  completion_window: '24h';
  created_at: number;
  finalized_at: number | null;
  status: BatchStatus;
  request_counts: { total: number; completed: number; failed: number };
  error: { message: string } | null;
  results?: BatchResultItem[] | null | undefined;
  usage?: JSONObject | null | undefined;
}

export interface BatchList {
  object: 'list';
  data: Batch[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface EmbeddingResponse {
  object: 'list';
  id?: string | undefined;
  model: string;
  /** The provider that answered (the service's answers name it, as chat's do). */
  provider?: string | undefined;
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  usage: {
    prompt_tokens: number;
    total_tokens: number;
    cost?: number | undefined;
    cost_details?: CostDetails | undefined;
    is_byok?: boolean | undefined;
    /** Tokens by modality, when the input held two or more (OpenAPI `createEmbeddings`). */
    prompt_tokens_details?: Record<string, number> | undefined;
  };
  /** A gateway's routing (`router serve --providers`), when asked with `routerMetadata`. */
  router_metadata?: RouterMetadata | undefined;
  openrouter_metadata?: RouterMetadata | undefined;
}

export interface DecisionAnswerNoul {
  type: 'noul';
  noul: number;
}
export interface DecisionAnswerChoice {
  type: 'choice';
  choice: string;
  confidence: number;
  probabilities: Record<string, number>;
}
export interface DecisionAnswerScore {
  type: 'score';
  score: number;
  confidence: number;
  legend: Record<string, DecisionText>;
  probabilities: Record<string, number>;
}
export type DecisionAnswer = DecisionAnswerNoul | DecisionAnswerChoice | DecisionAnswerScore;

/** Instructions or a criterion: api.md has a string; the deployed service also takes a JSON object or an array. */
export type DecisionText = string | JSONObject | unknown[];

export type DecisionQuestion =
  | { type: 'noul'; instructions: DecisionText; criteria?: { true: DecisionText; false: DecisionText } | undefined }
  | { type: 'choice'; instructions: DecisionText; criteria: Record<string, DecisionText | null> }
  | { type: 'score'; instructions: DecisionText; criteria: DecisionText[] };

export interface DecisionRequest {
  model: string;
  state: string | JSONObject | unknown[];
  questions: Record<string, DecisionQuestion>;
  provider?: ProviderPreferences | undefined;
  session_id?: string | undefined;
  trace?: JSONObject | undefined;
  user?: string | undefined;
}

export interface DecisionResponse {
  id: string;
  model: string;
  provider: string;
  usage: { cost: number; input_tokens: number; output_tokens: number };
  answers: Record<string, DecisionAnswer>;
}

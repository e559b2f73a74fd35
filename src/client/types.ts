/** Wire types of the Model Routing Service API (see shared/spec/api.md). */

export type JSONObject = Record<string, unknown>;

export interface ProviderPreferences {
  order?: string[];
  only?: string[];
  ignore?: string[];
  allow_fallbacks?: boolean;
  require_parameters?: boolean;
  data_collection?: 'allow' | 'deny';
  zdr?: boolean;
  sort?: unknown;
  [key: string]: unknown;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'developer' | 'tool';
  content: string | null | unknown[];
  name?: string;
  [key: string]: unknown;
}

export interface ChatCompletionRequest {
  messages: ChatMessage[];
  model?: string;
  models?: string[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  top_a?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  repetition_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  seed?: number;
  stop?: string | string[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: JSONObject;
  tools?: JSONObject[];
  tool_choice?: unknown;
  reasoning?: { effort?: string; summary?: string; enabled?: boolean };
  reasoning_effort?: string;
  provider?: ProviderPreferences;
  session_id?: string;
  metadata?: Record<string, string>;
  trace?: JSONObject;
  user?: string;
  service_tier?: string;
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
  cost?: number;
  cost_details?: CostDetails;
  is_byok?: boolean;
  prompt_tokens_details?: Record<string, number | null>;
  completion_tokens_details?: Record<string, number | null>;
  [key: string]: unknown;
}

/** Routing metadata: api.md's `router_metadata`, or the deployed service's `openrouter_metadata`. */
export interface RouterMetadata {
  attempt: number;
  endpoints: { available: { model: string; provider: string; selected: boolean }[]; total: number };
  generation_time?: number;
  is_byok: boolean;
  region: string | null;
  requested: string;
  strategy: string;
  summary: string;
  /** Each provider and model tried, with the HTTP status it answered (openrouter_metadata). */
  attempts?: { provider: string; model: string; status: number }[];
  /** The stages the request went through: guardrails, plugins, server tools (openrouter_metadata). */
  pipeline?: { type: string; name: string; summary?: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

/** An answer's routing metadata under either name (`openrouter_metadata`, the richer shape, when both), if it carries one. */
export function routingMetadata(answer: { router_metadata?: unknown; openrouter_metadata?: unknown } | null | undefined): RouterMetadata | undefined {
  const m = answer?.openrouter_metadata ?? answer?.router_metadata;
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as RouterMetadata) : undefined;
}

export interface ChatChoice {
  index: number;
  message: { role: 'assistant'; content: string | JSONObject[] | null; refusal?: string | null; [key: string]: unknown };
  finish_reason: string | null;
  native_finish_reason: string | null;
  logprobs: JSONObject | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  provider?: string | null;
  system_fingerprint: string | null;
  service_tier?: string | null;
  choices: ChatChoice[];
  usage: ChatUsage;
  router_metadata?: RouterMetadata;
  openrouter_metadata?: RouterMetadata;
  [key: string]: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  provider?: string;
  system_fingerprint?: string | null;
  choices: {
    index: number;
    delta: { role?: 'assistant'; content?: string | null; reasoning?: string | null; [key: string]: unknown };
    finish_reason: string | null;
    native_finish_reason?: string | null;
    logprobs?: JSONObject | null;
  }[];
  usage?: ChatUsage;
  error?: { code: number | string; message: string; metadata?: { error_type?: string } };
  router_metadata?: RouterMetadata;
  openrouter_metadata?: RouterMetadata;
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
  completion_window?: '24h';
  provider?: { only?: string[]; allow_fallbacks?: boolean };
}

export interface BatchResultItem {
  id: string;
  custom_id: string;
  response: { body: JSONObject; request_id: string; status_code: number } | null;
  error: { type: string; message: string; param: string | null; error_type?: string } | null;
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
  results?: BatchResultItem[] | null;
  usage?: JSONObject | null;
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
  id?: string;
  model: string;
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  usage: { prompt_tokens: number; total_tokens: number; cost?: number };
  /** A gateway's routing (`router serve --providers`), when asked with `routerMetadata`. */
  router_metadata?: RouterMetadata;
  openrouter_metadata?: RouterMetadata;
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
  | { type: 'noul'; instructions: DecisionText; criteria?: { true: DecisionText; false: DecisionText } }
  | { type: 'choice'; instructions: DecisionText; criteria: Record<string, DecisionText | null> }
  | { type: 'score'; instructions: DecisionText; criteria: DecisionText[] };

export interface DecisionRequest {
  model: string;
  state: string | JSONObject | unknown[];
  questions: Record<string, DecisionQuestion>;
  provider?: ProviderPreferences;
  session_id?: string;
  trace?: JSONObject;
  user?: string;
}

export interface DecisionResponse {
  id: string;
  model: string;
  provider: string;
  usage: { cost: number; input_tokens: number; output_tokens: number };
  answers: Record<string, DecisionAnswer>;
}

import { Resource, type PlainCallOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

/**
 * What the service knows of one generation after it ran (OpenAPI `getGeneration`, the answer's
 * `data`): what it really cost, the provider's own token counts, who served it and how fast.
 */
export interface Generation {
  id: string;
  model: string;
  /** USD charged. */
  total_cost: number;
  usage?: number | undefined;
  created_at: string;
  provider_name: string | null;
  streamed: boolean | null;
  cancelled?: boolean | null | undefined;
  /** Milliseconds, the whole request; `generation_time` the model's part. */
  latency: number | null;
  generation_time: number | null;
  finish_reason: string | null;
  native_finish_reason?: string | null | undefined;
  tokens_prompt: number | null;
  tokens_completion: number | null;
  native_tokens_prompt: number | null;
  native_tokens_completion: number | null;
  native_tokens_reasoning: number | null;
  native_tokens_cached: number | null;
  is_byok?: boolean | undefined;
  api_type?: string | null | undefined;
  http_referer?: string | null | undefined;
  [key: string]: unknown;
}

/** What the service stored of a generation (OpenAPI `GenerationContentData`): the prompt, the answer, the failure. */
export interface GenerationContent {
  input: { messages: unknown[] } | { prompt: string };
  output: { completion: string | null; reasoning: string | null };
  /** Null when the generation succeeded. */
  error: { message?: string | null | undefined; provider_name?: string | null | undefined; raw?: string | null | undefined; status?: number | null | undefined; previous_errors?: unknown[] | undefined } | null;
}

/** Feedback on a generation (OpenAPI `SubmitGenerationFeedbackRequest`). */
export interface GenerationFeedback {
  generation_id: string;
  category: 'latency' | 'incoherence' | 'incorrect_response' | 'formatting' | 'billing' | 'api_error' | 'other';
  /** At most 1,000 characters. */
  comment?: string | undefined;
}

export class Generations extends Resource {
  /** `GET {base_url}/generation?id=`: a 404 (APIError) for an id the service does not know (yet). */
  async get(id: string, opts: PlainCallOptions = {}): Promise<Generation> {
    return (await this.request<{ data: Generation }>('GET', '/generation', opts, { query: { id } }, SHAPES.generation)).data;
  }

  /** `GET {base_url}/generation/content?id=` (a management key): the stored prompt and completion; a 404 when none is stored. */
  async content(id: string, opts: PlainCallOptions = {}): Promise<GenerationContent> {
    return (await this.request<{ data: GenerationContent }>('GET', '/generation/content', opts, { query: { id } }, SHAPES.generationContent)).data;
  }

  /** `POST {base_url}/generation/feedback` (a management key): feedback on one of the workspace's generations. */
  async feedback(body: GenerationFeedback, opts: PlainCallOptions = {}): Promise<void> {
    await this.request<{ data: { success: true } }>('POST', '/generation/feedback', opts, { body }, SHAPES.feedback);
  }
}

import { round } from '../models/models.js';
import type { Candidate } from './candidates.js';

type Body = Record<string, unknown>;

/**
 * The cost of an upstream's answer: its usage at the configured prices, else the upstream's own
 * `usage.cost`, else 0. Written into the usage the caller sees; returned to be charged.
 */
export function priceUsage(usage: unknown, c: Candidate): number {
  if (!usage || typeof usage !== 'object') return 0;
  const u = usage as Body;
  const prices = c.model.prices;
  let cost: number;
  if (prices) {
    // Chat counts prompt and completion tokens; Responses, input and output tokens.
    const responses = u.input_tokens !== undefined && u.prompt_tokens === undefined;
    const prompt = round((Number(responses ? u.input_tokens : u.prompt_tokens) || 0) * prices.prompt);
    const completion = round((Number(responses ? u.output_tokens : u.completion_tokens) || 0) * prices.completion);
    cost = round(prompt + completion);
    u.cost_details = responses
      ? { upstream_inference_cost: null, upstream_inference_input_cost: prompt, upstream_inference_output_cost: completion }
      : { upstream_inference_cost: null, upstream_inference_prompt_cost: prompt, upstream_inference_completions_cost: completion };
  } else {
    cost = typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost > 0 ? round(u.cost) : 0;
  }
  u.cost = cost;
  u.is_byok = false;
  return cost;
}

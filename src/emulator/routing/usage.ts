import { round } from '../models/models.js';
import { HttpError } from '../http/http.js';
import type { Candidate } from './candidates.js';
import { inputTokens } from '../resources/embeddings.js';
import { chunkTokens, hangUpCost, promptCount, RelayedTokens } from './hang-up.js';

type Body = Record<string, unknown>;

/** A token count as priced: a negative or unreadable one is none (it must not make an answer cheaper). */
const tokens = (n: unknown) => Math.max(0, Number(n) || 0);

/**
 * The cost of an upstream's answer: its usage at the configured prices, else the upstream's own
 * `usage.cost`, else 0. Written into the usage the caller sees; returned to be charged.
 */
export function priceUsage(usage: unknown, c: Candidate): number {
  if (!usage || typeof usage !== 'object') return 0;
  const u = usage as Body;
  const prices = c.model.prices;
  // Chat counts prompt and completion tokens; Responses, input and output tokens.
  const responses = u.input_tokens !== undefined && u.prompt_tokens === undefined;
  let cost: number;
  if (prices) {
    const prompt = round(tokens(responses ? u.input_tokens : u.prompt_tokens) * prices.prompt);
    const completion = round(tokens(responses ? u.output_tokens : u.completion_tokens) * prices.completion);
    cost = round(prompt + completion);
    // Counts too large to price: charging them would put Infinity in the balance (and null in state.json).
    if (!Number.isFinite(cost)) throw new HttpError(502, `${c.slug}: an answer whose usage cannot be priced (${String(u.completion_tokens ?? u.output_tokens)} tokens)`);
    u.cost_details = costDetails(responses, prompt, completion);
  } else {
    cost = typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost > 0 ? round(u.cost) : 0;
    u.cost_details = upstreamDetails(u.cost_details, cost, responses);
    if (cost > 0) learnPrices(u, c);
  }
  u.cost = cost;
  u.is_byok = false;
  return cost;
}

/** The yaml's CostDetails (a Responses answer's names its sides input and output): the two sides of `cost`. */
function costDetails(responses: boolean, prompt: number, completion: number): Body {
  return responses
    ? { upstream_inference_cost: null, upstream_inference_input_cost: prompt, upstream_inference_output_cost: completion }
    : { upstream_inference_cost: null, upstream_inference_prompt_cost: prompt, upstream_inference_completions_cost: completion };
}

/**
 * An unpriced answer's `cost_details` beside the `cost` charged (the upstream's `usage.cost`, else 0),
 * so the two agree as the yaml's usage has them (CostDetails: its prompt and completion sides, the
 * cost's split): the upstream's when they are its cost's split; none (null, as CostDetails allows)
 * when they are not, or are no CostDetails, since the split is not known; zeros when nothing is charged.
 */
function upstreamDetails(details: unknown, cost: number, responses: boolean): Body | null {
  if (cost === 0) return costDetails(responses, 0, 0);
  if (!details || typeof details !== 'object' || Array.isArray(details)) return null;
  const d = details as Body;
  const [prompt, completion] = responses ? [d.upstream_inference_input_cost, d.upstream_inference_output_cost] : [d.upstream_inference_prompt_cost, d.upstream_inference_completions_cost];
  const side = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  return side(prompt) && side(completion) && Math.abs(prompt + completion - cost) <= 1e-9 * Math.max(1, cost) ? d : null;
}

/** A per-token price from a cost and its tokens: undefined unless both are positive finite numbers. */
function perToken(cost: unknown, count: unknown): number | undefined {
  if (typeof cost !== 'number' || !(cost >= 0) || !Number.isFinite(cost)) return undefined;
  const n = tokens(count);
  return n > 0 ? cost / n : undefined;
}

/**
 * Keeps the prices an unpriced model's upstream charged its answer at, from the split its
 * `cost_details` gives (an OpenRouter-shaped upstream's, another `router serve`'s): a hang-up before
 * the next answer's usage came is charged at them (hang-up.ts) instead of nothing. An answer without
 * the split (or without tokens on a side) teaches nothing.
 */
function learnPrices(u: Body, c: Candidate): void {
  const details = u.cost_details as Body | undefined;
  if (!details || typeof details !== 'object') return;
  const responses = u.input_tokens !== undefined && u.prompt_tokens === undefined;
  const prompt = perToken(details.upstream_inference_prompt_cost ?? details.upstream_inference_input_cost, responses ? u.input_tokens : u.prompt_tokens);
  const completion = perToken(details.upstream_inference_completions_cost ?? details.upstream_inference_output_cost, responses ? u.output_tokens : u.completion_tokens);
  if (prompt !== undefined && completion !== undefined) c.model.reported = { prompt, completion };
}

/**
 * An embeddings answer's usage when the upstream reports none (no usage, or no prompt tokens for an
 * input that has some, as aimock's 0): the input's tokens counted as the emulator counts its own
 * (local/embed), so the answer is priced at the file's `prompt` price instead of nothing. Its usage, to price.
 */
export function embeddingsUsage(answer: Record<string, unknown>, input: unknown): unknown {
  const u = (answer.usage && typeof answer.usage === 'object' ? answer.usage : {}) as Body;
  if (tokens(u.prompt_tokens) > 0) return answer.usage;
  let counted: number;
  try {
    counted = inputTokens(input);
  } catch {
    return answer.usage;
  }
  if (counted > 0) answer.usage = { ...u, prompt_tokens: counted, total_tokens: counted };
  return answer.usage;
}

/** A token count as an upstream must give it to be priced: a number, at least 0 (one too large to price is refused by priceUsage). */
const isCount = (n: unknown): n is number => typeof n === 'number' && n >= 0;

/** An upstream usage's two counts, by chat's names or Responses'. */
const sides = (u: Body): [unknown, unknown] => (u.input_tokens !== undefined && u.prompt_tokens === undefined ? [u.input_tokens, u.output_tokens] : [u.prompt_tokens, u.completion_tokens]);

/**
 * Whether an upstream's usage says what its answer cost: both token counts at configured prices, its own positive `cost`
 * without them. None, or a count that is no count (negative, text, null), says nothing of its side: priced at 0 it gave
 * the answer away; countedUsage counts that side instead.
 */
export function usable(usage: unknown, c: Candidate): boolean {
  if (!usage || typeof usage !== 'object') return false;
  const u = usage as Body;
  if (!c.model.prices && typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost > 0) return true;
  return sides(u).every(isCount);
}

/**
 * The usage of an answer whose upstream said none usable (`given`): each side it counts kept, the others, its prompt and
 * output, counted as the fake models count them (`responses`: Responses' names), priced as a hang-up's are (the configured
 * prices, else those the upstream last reported, else the listed ones); its cost returned, to be charged.
 */
export function countedUsage(c: Candidate, prompt: number, completion: number, responses = false, given?: unknown): { usage: Body; cost: number } {
  const [p, q] = given && typeof given === 'object' ? sides(given as Body) : [];
  if (isCount(p)) prompt = p;
  if (isCount(q)) completion = q;
  const usage: Body = responses ? { input_tokens: prompt, output_tokens: completion } : { prompt_tokens: prompt, completion_tokens: completion };
  usage.total_tokens = prompt + completion;
  if (c.model.prices) return { usage, cost: priceUsage(usage, c) };
  const cost = hangUpCost(c.model.reported ?? c.listed, prompt, completion);
  Object.assign(usage, { cost, is_byok: false, cost_details: costDetails(responses, 0, 0) });
  if (cost > 0) usage.cost_details = null;
  return { usage, cost };
}

/** A whole chat answer's cost: its usage priced, else (none usable) its prompt and message counted, that usage put in it. */
export function priceAnswer(answer: Body, c: Candidate, body: unknown): number {
  if (usable(answer.usage, c)) return priceUsage(answer.usage, c);
  const tokens = new RelayedTokens();
  chunkTokens({ choices: [{ delta: (answer.choices as Body[] | undefined)?.[0]?.message }] }, tokens);
  tokens.written();
  const counted = countedUsage(c, promptCount(body), tokens.sent, false, answer.usage);
  answer.usage = counted.usage;
  return counted.cost;
}

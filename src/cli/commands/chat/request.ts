import type { ChatCompletionRequest, ChatMessage } from '../../../client/types.js';
import { usage } from '../../exit-codes.js';
import { decimalNumber } from '../../flags/options.js';
import { applyRouting, checkMetadataFlags } from '../../io/input.js';
import type { ChatOptions } from './flags.js';

export type { ChatOptions };

/** The wire request of chat (and of each turn of chat -i), built from the flags. */

export function validateChatOptions(o: ChatOptions): void {
  if (o.stop && o.stop.length > 4) throw usage('--stop may be given at most 4 times');
  checkMetadataFlags(o.metadata);
  for (const [token, bias] of Object.entries(o.logitBias ?? {})) {
    if (!/^\d+$/.test(token)) throw usage(`--logit-bias ${token}=${bias}: "${token}" is not a token id (a whole number)`);
    if (decimalNumber(bias) === undefined) throw usage(`--logit-bias ${token}: "${bias}" is not a number`);
  }
}

/** Turns flags into the wire request (model resolved by the caller). */
export function buildChatRequest(messages: ChatMessage[], o: ChatOptions, model: string | undefined): ChatCompletionRequest {
  const req: ChatCompletionRequest = { messages };
  if (model) req.model = model;
  if (o.models) req.models = o.models;
  const numeric: [keyof ChatOptions, string][] = [
    ['maxTokens', 'max_completion_tokens'],
    ['temperature', 'temperature'],
    ['topP', 'top_p'],
    ['topK', 'top_k'],
    ['minP', 'min_p'],
    ['topA', 'top_a'],
    ['frequencyPenalty', 'frequency_penalty'],
    ['presencePenalty', 'presence_penalty'],
    ['repetitionPenalty', 'repetition_penalty'],
    ['seed', 'seed'],
    ['topLogprobs', 'top_logprobs'],
  ];
  for (const [flag, field] of numeric) if (o[flag] !== undefined) req[field] = o[flag];
  if (o.stop) req.stop = o.stop;
  if (o.logprobs || o.topLogprobs !== undefined) req.logprobs = true;
  if (o.logitBias) req.logit_bias = Object.fromEntries(Object.entries(o.logitBias).map(([k, v]) => [k, decimalNumber(v)!]));
  if (o.responseFormat) req.response_format = { type: o.responseFormat };
  if (o.reasoningEffort) req.reasoning = { effort: o.reasoningEffort };
  if (o.serviceTier) req.service_tier = o.serviceTier;
  applyRouting(req, o);
  return req;
}



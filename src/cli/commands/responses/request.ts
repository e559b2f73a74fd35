import type { ResponsesRequest } from '../../../client/resources/responses.js';
import { usage } from '../../exit-codes.js';
import { applyRouting } from '../../io/input.js';
import { decimalNumber } from '../../flags/options.js';
import type { ResponsesOpts } from './flags.js';

export function stopConditions(list: string[]): Record<string, unknown>[] {
  return list.map((c) => {
    const m = /^(step_count|max_cost)=(.+)$/.exec(c);
    if (!m) throw usage(`--stop-when must be step_count=N or max_cost=USD, got "${c}"`);
    const n = decimalNumber(m[2]!) ?? NaN;
    if (m[1] === 'step_count') {
      if (!Number.isInteger(n) || n < 1) throw usage(`--stop-when step_count must be an integer >= 1, got "${m[2]}"`);
      return { type: 'step_count_is', step_count: n };
    }
    if (!Number.isFinite(n) || n <= 0) throw usage(`--stop-when max_cost must be a positive number, got "${m[2]}"`);
    return { type: 'max_cost', max_cost_in_dollars: n };
  });
}

/** The wire request of `router responses`, built from the flags (model resolved by the caller). */
export function buildResponsesRequest(input: ResponsesRequest['input'], opts: ResponsesOpts, model: string | undefined, tools?: unknown): ResponsesRequest {
  const req: ResponsesRequest = { input };
  if (model) req.model = model;
  if (opts.models) req.models = opts.models;
  if (opts.instructions) req.instructions = opts.instructions;
  if (opts.maxOutputTokens !== undefined) req.max_output_tokens = opts.maxOutputTokens;
  if (opts.temperature !== undefined) req.temperature = opts.temperature;
  if (opts.topP !== undefined) req.top_p = opts.topP;
  if (tools) req.tools = tools;
  if (opts.toolChoice) req.tool_choice = opts.toolChoice;
  if (opts.reasoningEffort || opts.reasoningSummary) req.reasoning = { ...(opts.reasoningEffort ? { effort: opts.reasoningEffort } : {}), ...(opts.reasoningSummary ? { summary: opts.reasoningSummary } : {}) };
  if (opts.textFormat || opts.verbosity) req.text = { ...(opts.textFormat ? { format: { type: opts.textFormat } } : {}), ...(opts.verbosity ? { verbosity: opts.verbosity } : {}) };
  if (opts.serviceTier) req.service_tier = opts.serviceTier;
  if (opts.maxToolCalls !== undefined) req.max_tool_calls = opts.maxToolCalls;
  if (opts.stopWhen) req.stop_server_tools_when = stopConditions(opts.stopWhen);
  applyRouting(req, opts);
  return req;
}

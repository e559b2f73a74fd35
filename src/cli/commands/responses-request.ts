import type { ResponsesRequest } from '../../client/resources/responses.js';
import { usage } from '../exit-codes.js';
import { applyRouting } from '../input.js';
import { collect, decimalNumber, integerIn, MODEL_FLAGS, nonEmpty, ROUTING_FLAGS } from '../options.js';
import type { FlagTable, FlagValues } from '../flags.js';
import { REASONING_EFFORTS } from './chat-flags.js';
import { ANSWER_FLAGS } from './answer-flags.js';

/** The flags of `router responses`, in help order; ResponsesOpts is inferred from them. */
export const RESPONSES_FLAGS = {
  ...MODEL_FLAGS,
  role: { flags: '--role <name>', help: 'apply a role: its settings and system prompt as instructions (router roles list); flags given here win', parse: nonEmpty },
  input: { flags: '--input <file>', help: 'input from a JSON file: a string or an array of input items ("-" for stdin)' },
  instructions: { flags: '--instructions <text>', help: 'system instructions; @FILE reads them from a file, @- from stdin (@@ for a leading @)', parse: nonEmpty },
  maxOutputTokens: { flags: '--max-output-tokens <n>', help: 'maximum output tokens (>= 1)', parse: integerIn(1) },
  tools: { flags: '--tools <file>', help: 'tools from a JSON file (an array of tool objects)' },
  toolChoice: { flags: '--tool-choice <choice>', help: 'tool choice', choices: ['auto', 'none', 'required'] },
  reasoningEffort: { flags: '--reasoning-effort <level>', help: 'reasoning effort', choices: REASONING_EFFORTS },
  reasoningSummary: { flags: '--reasoning-summary <kind>', help: 'reasoning summary', choices: ['auto', 'concise', 'detailed'] },
  textFormat: { flags: '--text-format <type>', help: 'text output format', choices: ['text', 'json_object'] },
  verbosity: { flags: '--verbosity <level>', help: 'text verbosity', choices: ['low', 'medium', 'high'] },
  serviceTier: { flags: '--service-tier <tier>', help: 'service tier', choices: ['auto', 'default', 'fast', 'flex', 'priority', 'scale'] },
  maxToolCalls: { flags: '--max-tool-calls <n>', help: 'server-tool agent steps, 0 to 30 (default 30)', parse: integerIn(0, 30) },
  stopWhen: { flags: '--stop-when <cond>', help: 'stop the server-tool loop: step_count=N or max_cost=USD (repeatable; overrides --max-tool-calls)', parse: collect },
  previousResponseId: { flags: '--previous-response-id <id>', help: 'not supported by the service: refused (send the history in --input)' },
  stream: [
    { flags: '--stream', help: 'stream (default for text; with --json, print events as JSONL)' },
    { flags: '--no-stream', help: 'wait for the whole response' },
  ],
  raw: { flags: '--raw', help: 'print the text exactly as received (on a terminal it is rendered as Markdown)' },
  json: { flags: '--json', help: 'print the response object (or events as JSONL with --stream)' },
  usage: { flags: '--usage', help: 'print token usage and cost to stderr' },
  ...ANSWER_FLAGS,
  ...ROUTING_FLAGS,
} as const satisfies FlagTable;

export type ResponsesOpts = FlagValues<typeof RESPONSES_FLAGS>;


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

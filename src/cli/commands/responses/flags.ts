import { collect, GENERATION_FLAGS, integerIn, nonEmpty, paramValue, OUTPUT_FLAGS, REASONING_EFFORT_FLAG, ROUTING_FLAGS } from '../../flags/options.js';
import type { FlagTable, FlagValues } from '../../flags/flags.js';
import { ANSWER_FLAGS, TOOL_FLAGS } from '../../flags/answer-flags.js';

/** The flags of `router responses` (but the spend flags), in help order: also what a role may hold. */
export const RESPONSES_FLAGS = {
  ...GENERATION_FLAGS,
  role: { flags: '--role <name>', help: 'apply a role: its settings and system prompt as instructions (router roles list); flags given here win', parse: nonEmpty, complete: 'roles' },
  input: { flags: '--input <file>', help: 'input from a JSON file: a string or an array of input items ("-" for stdin)' },
  param: { flags: '--param <name=value>', help: "a value for the role's $NAME, repeatable: --param lang French (or lang=French)", parse: paramValue },
  instructions: { flags: '--instructions <text>', help: 'system instructions; @FILE reads them from a file, @- from stdin (@@ for a leading @)', parse: nonEmpty },
  maxOutputTokens: { flags: '--max-output-tokens <n>', help: 'maximum output tokens (>= 1)', parse: integerIn(1) },
  tools: { flags: '--tools <file>', help: 'tools (a JSON array, chat\'s or the flat form); a function tool with a "command" is run when called' },
  mcp: TOOL_FLAGS.mcp,
  maxToolRounds: TOOL_FLAGS.maxToolRounds,
  approve: TOOL_FLAGS.approve,
  toolTimeout: TOOL_FLAGS.toolTimeout,
  mcpRoot: TOOL_FLAGS.mcpRoot,
  mcpSampling: TOOL_FLAGS.mcpSampling,
  toolChoice: { flags: '--tool-choice <choice>', help: 'tool choice', choices: ['auto', 'none', 'required'] },
  reasoningEffort: REASONING_EFFORT_FLAG,
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
  raw: OUTPUT_FLAGS.raw,
  json: { flags: '--json', help: 'print the response object (or events as JSONL with --stream)' },
  usage: OUTPUT_FLAGS.usage,
  ...ANSWER_FLAGS,
  ...ROUTING_FLAGS,
} as const satisfies FlagTable;

export type ResponsesOpts = FlagValues<typeof RESPONSES_FLAGS>;

import { Option, type Command } from '../commander.js';
import type { ResponsesRequest } from '../../client/resources/responses.js';
import { action, type RunContext } from '../run.js';
import { addRoutingFlags, collect, commaList, integerIn, numberIn } from '../options.js';
import { usage } from '../exit-codes.js';
import { checkMetadataFlags, providerFrom, readJsonFile, textFromArgs, type ProviderFlags } from '../input.js';
import { REASONING_EFFORTS } from './chat.js';

interface ResponsesOpts extends ProviderFlags {
  input?: string;
  model?: string;
  models?: string[];
  instructions?: string;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  tools?: string;
  toolChoice?: string;
  reasoningEffort?: string;
  reasoningSummary?: string;
  textFormat?: string;
  verbosity?: string;
  serviceTier?: string;
  maxToolCalls?: number;
  stopWhen?: string[];
  session?: string;
  metadata?: Record<string, string>;
  user?: string;
  previousResponseId?: string;
  routerMetadata?: boolean;
  stream?: boolean;
  json?: boolean;
  usage?: boolean;
}

export function registerResponses(program: Command): void {
  addRoutingFlags(
  program
    .command('responses')
    .summary('generate in the Responses format, streaming the text')
    .description('Create a response in the Responses format. Each request is independent: the whole history goes in the input.')
    .argument('[prompt...]', 'the prompt; "-" or nothing reads stdin')
    .option('--input <file>', 'input from a JSON file: a string or an array of input items ("-" for stdin)')
    .option('-m, --model <id>', 'model, <author>/<slug>')
    .option('--models <ids>', 'fallback models, comma-separated', commaList)
    .option('--instructions <text>', 'system instructions')
    .option('--max-output-tokens <n>', 'maximum output tokens (>= 1)', integerIn(1))
    .option('-t, --temperature <t>', '0 to 2', numberIn(0, 2))
    .option('--top-p <p>', '0 to 1', numberIn(0, 1))
    .option('--tools <file>', 'tools from a JSON file (an array of tool objects)')
    .addOption(new Option('--tool-choice <choice>', 'tool choice').choices(['auto', 'none', 'required']))
    .addOption(new Option('--reasoning-effort <level>', 'reasoning effort').choices(REASONING_EFFORTS))
    .addOption(new Option('--reasoning-summary <kind>', 'reasoning summary').choices(['auto', 'concise', 'detailed']))
    .addOption(new Option('--text-format <type>', 'text output format').choices(['text', 'json_object']))
    .addOption(new Option('--verbosity <level>', 'text verbosity').choices(['low', 'medium', 'high']))
    .addOption(new Option('--service-tier <tier>', 'service tier').choices(['auto', 'default', 'fast', 'flex', 'priority', 'scale']))
    .option('--max-tool-calls <n>', 'server-tool agent steps, 0 to 30 (default 30)', integerIn(0, 30))
    .option('--stop-when <cond>', 'stop the server-tool loop: step_count=N or max_cost=USD (repeatable; overrides --max-tool-calls)', collect)
    .option('--previous-response-id <id>', 'not supported by the service: refused (send the history in --input)')
    .option('--stream', 'stream (default for text; with --json, print events as JSONL)')
    .option('--no-stream', 'wait for the whole response')
    .option('--json', 'print the response object (or events as JSONL with --stream)')
    .option('--usage', 'print token usage and cost to stderr'),
  )
    .addHelpText('after', `
Examples:
  $ router responses "Explain SSE in one sentence" --model local/lorem
  $ router responses --input history.json --json | jq .output_text
  $ router responses "plan a trip" --stop-when step_count=3 --stop-when max_cost=0.05`)
    .action(action<ResponsesOpts, [string[]]>(runResponses));
}

function stopConditions(list: string[]): Record<string, unknown>[] {
  return list.map((c) => {
    const m = /^(step_count|max_cost)=(.+)$/.exec(c);
    if (!m) throw usage(`--stop-when must be step_count=N or max_cost=USD, got "${c}"`);
    const n = Number(m[2]);
    if (m[1] === 'step_count') {
      if (!Number.isInteger(n) || n < 1) throw usage(`--stop-when step_count must be an integer >= 1, got "${m[2]}"`);
      return { type: 'step_count_is', step_count: n };
    }
    if (!Number.isFinite(n) || n <= 0) throw usage(`--stop-when max_cost must be a positive number, got "${m[2]}"`);
    return { type: 'max_cost', max_cost_in_dollars: n };
  });
}

async function runResponses({ io, opts, flags, signal, connect }: RunContext<ResponsesOpts>, args: string[]): Promise<void> {
  if (opts.previousResponseId !== undefined) {
    throw usage('--previous-response-id is not supported: each request is independent; put the whole history in --input');
  }
  checkMetadataFlags(opts.metadata);
  const stops = opts.stopWhen ? stopConditions(opts.stopWhen) : undefined;
  let input: ResponsesRequest['input'];
  if (opts.input !== undefined) {
    if (args.length) throw usage('give the prompt either as arguments or with --input, not both');
    const parsed = await readJsonFile('--input', opts.input, io);
    if (typeof parsed !== 'string' && !Array.isArray(parsed)) throw usage('--input must hold a string or an array of input items');
    input = parsed as ResponsesRequest['input'];
  } else {
    input = await textFromArgs(args, io, { example: 'echo hi | router responses', mergeStdin: true });
  }
  let tools: unknown;
  if (opts.tools !== undefined) {
    tools = await readJsonFile('--tools', opts.tools, io);
    if (!Array.isArray(tools)) throw usage('--tools must hold a JSON array of tools');
  }
  const { client, settings } = await connect({ model: opts.model });
  const req: ResponsesRequest = { input };
  if (settings.model) req.model = settings.model;
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
  if (stops) req.stop_server_tools_when = stops;
  if (opts.session) req.session_id = opts.session;
  if (opts.metadata) req.metadata = opts.metadata;
  if (opts.user) req.user = opts.user;
  const provider = providerFrom(opts);
  if (provider) req.provider = provider;
  const call = { signal, routerMetadata: opts.routerMetadata };
  const { outputText } = await import('../../client/resources/responses.js');
  const usageLine = (u: { input_tokens: number; output_tokens: number; total_tokens: number; cost?: number } | null | undefined) =>
    u ? `usage: ${u.input_tokens} input + ${u.output_tokens} output = ${u.total_tokens} tokens${typeof u.cost === 'number' ? `, cost $${u.cost.toFixed(6)}` : ''}` : 'usage: not reported';
  try {
    if (!(opts.stream ?? !opts.json)) {
      const r = await client.responses.create(req, call);
      if (opts.json) io.json(r);
      else {
        const text = outputText(r);
        io.out(text.endsWith('\n') ? text : `${text}\n`);
        if (opts.routerMetadata && r.router_metadata) io.note(`router: ${String(r.router_metadata.summary)}`);
      }
      if (r.status === 'incomplete') io.info('note: the response is incomplete (max output tokens reached)');
      if (opts.usage) io.note(usageLine(r.usage));
      return;
    }
    const writer = io.streamWriter();
    let last = '';
    let final: { usage?: unknown; router_metadata?: { summary?: string } } | undefined;
    try {
      for await (const ev of await client.responses.stream(req, call)) {
        if (opts.json) {
          await writer.write(`${JSON.stringify(ev)}\n`);
        } else if (ev.type === 'response.output_text.delta' && ev.delta) {
          last = ev.delta;
          await writer.write(ev.delta);
        }
        if (ev.type === 'response.completed' || ev.type === 'response.incomplete') final = ev.response as typeof final;
      }
      if (!opts.json && !last.endsWith('\n')) await writer.write('\n');
    } finally {
      await writer.end();
    }
    if (opts.routerMetadata && !opts.json && final?.router_metadata) io.note(`router: ${final.router_metadata.summary}`);
    if (opts.usage) io.note(usageLine(final?.usage as never));
  } finally {
    await client.close();
  }
}

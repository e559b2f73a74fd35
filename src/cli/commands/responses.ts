import { Option, type Command } from '../commander.js';
import { isFinalResponse, isTextDelta, outputText, type ResponsesRequest, type ResponsesResult } from '../../client/resources/responses.js';
import type { RouterClient } from '../../client/index.js';
import type { IO } from '../io.js';
import { printText, streamToStdout, usageLine } from '../output.js';
import { buildResponsesRequest, stopConditions, type ResponsesOpts } from './responses-request.js';
import { action, type RunContext } from '../run.js';
import { addModelFlags, addRoutingFlags, collect, integerIn } from '../options.js';
import { usage } from '../exit-codes.js';
import { checkMetadataFlags, readJsonFile, textFromArgs } from '../input.js';
import { REASONING_EFFORTS } from './chat.js';


export function registerResponses(program: Command): void {
  addRoutingFlags(
  addModelFlags(program
    .command('responses')
    .summary('generate in the Responses format, streaming the text')
    .description('Create a response in the Responses format. Each request is independent: the whole history goes in the input.')
    .argument('[prompt...]', 'the prompt; "-" or nothing reads stdin'))
    .option('--input <file>', 'input from a JSON file: a string or an array of input items ("-" for stdin)')
    .option('--instructions <text>', 'system instructions')
    .option('--max-output-tokens <n>', 'maximum output tokens (>= 1)', integerIn(1))
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

async function runResponses({ io, opts, signal, connect }: RunContext<ResponsesOpts>, args: string[]): Promise<void> {
  if (opts.previousResponseId !== undefined) {
    throw usage('--previous-response-id is not supported: each request is independent; put the whole history in --input');
  }
  checkMetadataFlags(opts.metadata);
  if (opts.stopWhen) stopConditions(opts.stopWhen);
  const input = await inputFrom(io, opts, args);
  let tools: unknown;
  if (opts.tools !== undefined) {
    tools = await readJsonFile('--tools', opts.tools, io);
    if (!Array.isArray(tools)) throw usage('--tools must hold a JSON array of tools');
  }
  const { client, settings } = await connect({ model: opts.model });
  const req = buildResponsesRequest(input, opts, settings.model, tools);
  const call = { signal, routerMetadata: opts.routerMetadata };
  try {
    const final = (opts.stream ?? !opts.json) ? await streamResponse(io, client, req, opts, call) : await createResponse(io, client, req, opts, call);
    if (opts.routerMetadata && !opts.json && final?.router_metadata) io.note(`router: ${String(final.router_metadata.summary)}`);
    if (final?.status === 'incomplete') io.info('note: the response is incomplete (max output tokens reached)');
    const u = final?.usage;
    if (opts.usage) io.note(usageLine(u ? { input: u.input_tokens, output: u.output_tokens, total: u.total_tokens, cost: u.cost } : undefined));
  } finally {
    await client.close();
  }
}

async function inputFrom(io: IO, opts: ResponsesOpts, args: string[]): Promise<ResponsesRequest['input']> {
  if (opts.input === undefined) return textFromArgs(args, io, { example: 'echo hi | router responses', mergeStdin: true });
  if (args.length) throw usage('give the prompt either as arguments or with --input, not both');
  const parsed = await readJsonFile('--input', opts.input, io);
  if (typeof parsed !== 'string' && !Array.isArray(parsed)) throw usage('--input must hold a string or an array of input items');
  return parsed as ResponsesRequest['input'];
}

type Call = { signal: AbortSignal; routerMetadata?: boolean };

async function createResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: Call): Promise<ResponsesResult> {
  const r = await client.responses.create(req, call);
  if (opts.json) io.json(r);
  else printText(io, outputText(r));
  return r;
}

/** Text deltas (or, with --json, every event as a JSON line) to stdout; returns the final response. */
async function streamResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: Call): Promise<ResponsesResult | undefined> {
  let final: ResponsesResult | undefined;
  const events = await client.responses.stream(req, call);
  async function* pieces() {
    for await (const ev of events) {
      if (isFinalResponse(ev)) final = ev.response;
      if (opts.json) yield `${JSON.stringify(ev)}\n`;
      else if (isTextDelta(ev)) yield ev.delta;
    }
  }
  await streamToStdout(io, pieces(), { endLine: !opts.json });
  return final;
}

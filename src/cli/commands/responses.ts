import type { Command } from '../commander.js';
import { usageFields } from '../ledger.js';
import { addFlags } from '../flags.js';
import { isFinalResponse, isTextDelta, outputText, type ResponsesRequest, type ResponsesResult } from '../../client/resources/responses.js';
import type { RouterClient } from '../../client/index.js';
import type { IO } from '../io.js';
import { printText, streamToStdout, usageLine } from '../output.js';
import { buildResponsesRequest, RESPONSES_FLAGS, stopConditions, type ResponsesOpts } from './responses-request.js';
import { action, type RunContext } from '../run.js';
import { usage } from '../exit-codes.js';
import { checkMetadataFlags, readJsonFile } from '../input.js';
import { applyExtras, finishAnswer, prepareExtras, promptWith, reasoningPrinter, userContent, type Extras } from './chat-extras.js';
import { reasoningSummary, responseMessage } from '../answer-extras.js';


export function registerResponses(program: Command): void {
  addFlags(
    program
      .command('responses')
      .description('Create a response in the Responses format. Each request is independent: the whole history goes in the input.')
      .argument('[prompt...]', 'the prompt; "-" or nothing reads stdin'),
    RESPONSES_FLAGS,
  )
    .addHelpText('after', `
Examples:
  $ router responses "Explain SSE in one sentence" --model local/lorem
  $ router responses --input history.json --json | jq .output_text
  $ router responses "plan a trip" --stop-when step_count=3 --stop-when max_cost=0.05
  $ router responses --model local/vision -a photo.png "Describe it"`)
    .action(action<ResponsesOpts, [string[]]>(runResponses));
}

async function runResponses(ctx: RunContext<ResponsesOpts>, args: string[]): Promise<void> {
  const { io, opts, signal, connect } = ctx;
  if (opts.previousResponseId !== undefined) {
    throw usage('--previous-response-id is not supported: each request is independent; put the whole history in --input');
  }
  checkMetadataFlags(opts.metadata);
  if (opts.stopWhen) stopConditions(opts.stopWhen);
  const extras = await prepareExtras(opts, io, 'responses');
  const input = await inputFrom(io, opts, args, extras);
  let tools: unknown;
  if (opts.tools !== undefined) {
    tools = await readJsonFile('--tools', opts.tools, io);
    if (!Array.isArray(tools)) throw usage('--tools must hold a JSON array of tools');
  }
  const { client, settings } = await connect({ model: opts.model });
  const req = buildResponsesRequest(input, opts, settings.model, tools);
  applyExtras(req, opts, extras, 'responses');
  const call = { signal, routerMetadata: opts.routerMetadata };
  try {
    const final = (opts.stream ?? !opts.json) ? await streamResponse(io, client, req, opts, call) : await createResponse(io, client, req, opts, call);
    if (opts.routerMetadata && !opts.json && final?.router_metadata) io.note(`router: ${String(final.router_metadata.summary)}`);
    if (final?.status === 'incomplete') io.info('note: the response is incomplete (max output tokens reached)');
    const u = final?.usage;
    ctx.logUsage({ endpoint: '/v1/responses', model: String(final?.model ?? req.model ?? ''), ...(final?.id ? { id: String(final.id) } : {}), ...usageFields(u as Record<string, unknown> | undefined) });
    if (opts.usage) io.note(usageLine(u ? { input: u.input_tokens, output: u.output_tokens, total: u.total_tokens, cost: u.cost } : undefined));
    // Last: an answer that does not follow --schema ends the command (exit 10), after it was counted.
    if (final) finishAnswer(io, opts, extras, responseMessage(final));
  } finally {
    await client.close();
  }
}

async function inputFrom(io: IO, opts: ResponsesOpts, args: string[], extras: Extras): Promise<ResponsesRequest['input']> {
  if (opts.input === undefined) {
    const prompt = await promptWith(args, io, extras, 'echo hi | router responses');
    const content = userContent(prompt, extras, 'responses');
    return typeof content === 'string' ? content : [{ role: 'user', content }];
  }
  if (extras.attachments.length) throw usage('--attach goes with a prompt, not with --input (put the parts in the input items)');
  if (args.length) throw usage('give the prompt either as arguments or with --input, not both');
  const parsed = await readJsonFile('--input', opts.input, io);
  if (typeof parsed !== 'string' && !Array.isArray(parsed)) throw usage('--input must hold a string or an array of input items');
  return parsed as ResponsesRequest['input'];
}

type Call = { signal: AbortSignal; routerMetadata?: boolean };

async function createResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: Call): Promise<ResponsesResult> {
  const r = await client.responses.create(req, call);
  const reasoning = reasoningPrinter(io, opts);
  reasoning.write(reasoningSummary(r));
  reasoning.end();
  if (opts.json) io.json(r);
  else if (!opts.schema) printText(io, outputText(r));
  return r;
}

/** Text deltas (or, with --json, every event as a JSON line) to stdout; returns the final response. */
async function streamResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: Call): Promise<ResponsesResult | undefined> {
  let final: ResponsesResult | undefined;
  const events = await client.responses.stream(req, call);
  const reasoning = reasoningPrinter(io, opts);
  async function* pieces() {
    for await (const ev of events) {
      if (isFinalResponse(ev)) final = ev.response;
      if (ev.type === 'response.reasoning_summary_text.delta') reasoning.write(String(ev.delta ?? ''));
      else if (isTextDelta(ev)) reasoning.end();
      if (opts.json) yield io.jsonLine(ev);
      else if (isTextDelta(ev) && !opts.schema) yield ev.delta;
    }
  }
  await streamToStdout(io, pieces(), { endLine: !opts.json && !opts.schema });
  reasoning.end();
  return final;
}

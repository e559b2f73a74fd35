/** `router responses`: one independent request in the Responses format, the text streamed to stdout. */
import { usageFields } from '../../../kit/spend/ledger.js';
import { readResponse } from '../../../client/answer-reading.js';
import { isFinalResponse, isTextDelta, type ResponsesEvent, type ResponsesRequest, type ResponsesResult } from '../../../client/resources/responses.js';
import type { RouterClient } from '../../../client/index.js';
import type { ChatUsage } from '../../../client/types.js';
import { addUsage } from '../../../kit/messages.js';
import type { AnsweringOptions } from '../../../client/resources/shared.js';
import type { IO } from '../../io/io.js';
import { StreamError } from '../../../client/errors.js';
import { cutBlock, haltedUsageLine, printText, shownPieces, shownText, streamToStdout, usageWithSampling } from '../../io/output.js';
import { buildResponsesRequest, stopConditions } from './request.js';
import { RESPONSES_FLAGS, type ResponsesOpts } from './flags.js';
import type { RunContext } from '../../run.js';
import { defineCommand } from '../../define.js';
import type { FlagValues } from '../../flags/flags.js';
import { applyRoleFlag, blameRole } from '../../saved/roles.js';
import { fillRole } from '../../saved/role-params.js';
import { applyModelOptions } from '../../saved/model-options.js';
import { roundCost } from '../../../internal/round-cost.js';
import { boundNote, guardNext, guardSpend, limitFlagOf, loweredBy, SPEND_FLAGS } from '../../spend/spend-guard.js';
import { usage } from '../../exit-codes.js';
import { checkMetadataFlags, readJsonFile, textOrFile } from '../../io/input.js';
import { applyExtras, finishAnswer, prepareExtras, promptWith, reasoningPrinter, userContent, type Extras } from '../../answers/request-extras.js';
import { jqOnSchemaAnswer, takeSchemaMulti } from '../../answers/schema-check.js';
import { functionCalls, reasoningSummary, responseMessage } from '../../answers/answer-extras.js';
import { mcpAnswers, type SamplingSend } from '../../tools/mcp-answers.js';
import { samplingSender } from '../../spend/sampling-send.js';
import { callsNotRun, chatCalls, imageInput, loadTools, mcpFrom, mcpServers, openTools } from '../../tools/tool-runner.js';
import { responsesToolLoop } from './tool-loop.js';
import { noteAnsweredBy } from '../../answers/answered-by.js';
import { noteRouting } from '../../answers/routing-note.js';
import { atExit } from '../../../internal/exit-hooks.js';
import { waitingFor, waitingSpinner } from '../../io/spinner.js';
import { counted } from '../../../internal/counted.js';
import { EventRedactor } from '../../../internal/redact-events.js';

/** The top-level fields of the JSON printed (for lists: of each item), for `--json FIELDS`. */
const RESPONSE = ['id', 'object', 'created_at', 'completed_at', 'model', 'status', 'output', 'output_text', 'error', 'incomplete_details', 'instructions', 'metadata', 'temperature', 'top_p', 'max_output_tokens', 'max_tool_calls', 'tools', 'tool_choice', 'prompt', 'prompt_cache_key', 'prompt_cache_options', 'reasoning', 'service_tier', 'text', 'truncation', 'user', 'usage', 'router_metadata', 'openrouter_metadata'];
const RESPONSE_EVENT = ['type', 'sequence_number', 'response', 'delta', 'item_id', 'output_index', 'content_index', 'item', 'part', 'text'];

const FLAGS = { ...RESPONSES_FLAGS, ...SPEND_FLAGS };

export const responses = defineCommand({
  name: 'responses',
  logsUsage: true,
  jsonFields: [...RESPONSE, ...RESPONSE_EVENT.filter((f) => !RESPONSE.includes(f))],
  summary: 'generate in the Responses format, streamed',
  description: 'Create a response in the Responses format. Each request is independent: the whole history goes in the input. A lone "help" is refused, not sent: to send the word itself, router responses -- help.',
  args: [{ name: '[prompt...]', help: 'the prompt; "-" or nothing reads stdin' }],
  flags: FLAGS,
  examples: [
    'router responses "Explain SSE in one sentence" --model local/lorem',
    'router responses --input history.json --json | jq .output_text',
    'router responses "plan a trip" --stop-when step_count=3 \\\n--stop-when max_cost=0.05',
    'router responses "write 40 words" --model local/lorem \\\n--max-cost 0.0005 --usage',
    'router responses --model local/vision -a photo.png "Describe it"',
  ],
  fromSettings: (s) => ({ mcp: s.mcp }),
  run: runResponses,
});

async function runResponses(ctx: RunContext<FlagValues<typeof FLAGS>>, args: string[]): Promise<void> {
  const { io, opts, signal, connect } = ctx;
  const role = await applyRoleFlag(ctx.cmd, opts, io, async () => ({ mcp: (await ctx.settings()).mcp }));
  opts.instructions = await textOrFile('--instructions', opts.instructions, io);
  if (opts.previousResponseId !== undefined) {
    throw usage('--previous-response-id is not supported: each request is independent; put the whole history in --input');
  }
  try {
    checkMetadataFlags(opts.metadata);
    if (opts.stopWhen) stopConditions(opts.stopWhen);
  } catch (err) {
    throw blameRole(err, role, ctx.cmd);
  }
  takeSchemaMulti(opts);
  jqOnSchemaAnswer(opts, ctx.argv);
  const extras = await prepareExtras(opts, io, 'responses', loadTools).catch((err: unknown) => Promise.reject(blameRole(err, role, ctx.cmd)));
  const input = await inputFrom(io, opts, args, extras, (prompt) => fillRole(ctx.cmd, opts, role, prompt, io));
  ctx.useCommandModel();
  applyModelOptions(ctx.cmd, opts, (await ctx.settings()).model, io.env);
  const connected = await connect();
  (await import('../../answers/key-in-prompt.js')).sayKeyInPrompt(io, typeof input === 'string' ? input : JSON.stringify(input));
  const { client, settings } = connected;
  const req = buildResponsesRequest(input, opts, settings.model);
  applyExtras(req, opts, extras, 'responses');
  if (extras.attachments.length) await (await import('../../service/attachments-taken.js')).checkAttachmentsTaken(client, io.env, settings.apiRoot, typeof req.model === 'string' ? req.model : undefined, extras.attachments);
  const call = { signal, routerMetadata: opts.routerMetadata };
  const sampling: SamplingSend = {};
  const answers = mcpAnswers(io, { roots: opts.mcpRoot, sampling: opts.mcpSampling }, sampling);
  const toolSet = await openTools({ local: extras.tools, mcp: mcpServers(io, opts.mcp, settings), mcpFrom: mcpFrom(opts.mcp, settings), env: io.env, secrets: [settings.apiKey, settings.managementKey], signal, timeoutSeconds: opts.toolTimeout ?? ctx.flags.timeout, answers }).catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  const tools = [...(toolSet?.responsesTools() ?? []), ...(extras.tools?.other ?? [])];
  if (tools.length) req.tools = tools;
  try {
    const body = req as unknown as Record<string, unknown>;
    // Function tools (commands, MCP) run here, a round at a time, each bounded; server tools run in the service's own loop.
    const loop = !extras.tools?.other.length ? undefined : 'the service runs the tools of its own (web_search, …) in a loop of model calls whose inputs hold their results, which no bound can foresee (let the call through: no --max-cost, and --ignore-budget under a budget; --stop-when max_cost=USD asks the service to stop it)';
    const asked = req.max_output_tokens;
    const guarded = (b: Record<string, unknown>) => ({ body: b, unboundable: loop, sentWith: (opts.stream ?? !opts.json) ? { stream: true } : undefined, models: [req.model, ...((req.models as string[] | undefined) ?? [])], limitField: 'max_output_tokens', limitFlag: limitFlagOf(ctx, 'maxOutputTokens', '--max-output-tokens'), explicitLimit: opts.maxOutputTokens !== undefined, completes: true });
    const guard = await guardSpend(ctx, connected, guarded(body));
    if (guard.dryRun) return;
    // Each round of a tool loop is a call the service charges: each is in the ledger, and --usage sums them.
    let u: ResponseUsage | undefined;
    let spent: number | undefined;
    let sampled: ChatUsage | undefined;
    Object.assign(sampling, { model: req.model ?? (req.models as string[] | undefined)?.[0], send: samplingSender(ctx, connected, guard, () => spent ?? 0, (c, got) => ((spent = (spent ?? 0) + c), (sampled = addUsage(sampled, got)))) });
    const send = async (r: ResponsesRequest) => {
      // A later round's input holds the tool results: it is held to what the cap has left.
      if (spent !== undefined) await guardNext(ctx, connected, guard, guarded(r as unknown as Record<string, unknown>), spent);
      const log = (got: Partial<ResponsesResult> | undefined) => ctx.logUsage({ endpoint: '/v1/responses', model: String(got?.model || req.model || ''), ...(got?.id ? { id: String(got.id) } : {}), ...usageFields(got?.usage as Record<string, unknown> | undefined) });
      const stopWaiting = waitingSpinner(io, waitingFor(r.model ?? (r.models as string[] | undefined)?.[0]));
      const got = await ((opts.stream ?? !opts.json) ? streamResponse(io, client, r, opts, call, log, (id) => ctx.answering(id, '/v1/responses')) : createResponse(io, client, r, opts, { ...call, answering: (id) => ctx.answering(id, '/v1/responses') })).finally(stopWaiting);
      log(got);
      spent = (spent ?? 0) + (typeof got?.usage?.cost === 'number' ? got.usage.cost : (guard.bound ?? 0));
      u = summed(u, got?.usage ?? undefined);
      return got;
    };
    const spentLine = () => usageWithSampling(u ? { input: u.input_tokens, output: u.output_tokens, total: u.total_tokens, cost: u.cost } : undefined, sampled) + boundNote(guard);
    let final = await send(req);
    // --jq halted: the answer stops where the filter did; none of it is checked.
    if (final && 'halted' in final) {
      if (opts.usage) ctx.closingNote(u ? spentLine() : haltedUsageLine(typeof final.id === 'string' ? final.id || undefined : undefined, ctx.logging) + boundNote(guard));
      return;
    }
    // A later round refused (--max-cost, a budget) or failed: what the rounds before it cost is still said.
    if (toolSet) final = await responsesToolLoop(io, { set: toolSet, maxRounds: opts.maxToolRounds ?? 8, approve: !!opts.approve, json: !!opts.json, signal, timeout: opts.toolTimeout ?? ctx.flags.timeout, timeoutFlag: opts.toolTimeout === undefined ? '--timeout' : '--tool-timeout', takesImages: imageInput(client, io.env, settings.apiRoot, req.model, signal) }, req, final, send).catch((err: unknown) => {
      if (opts.usage) ctx.closingNote(spentLine());
      throw err;
    });
    if (opts.routerMetadata && !opts.json) noteRouting(io, final);
    noteAnsweredBy(io, opts, req.model ?? (req.models as string[] | undefined)?.[0], typeof final?.model === 'string' ? final.model || undefined : undefined);
    if (final?.status === 'incomplete') io.note(`note: the response is incomplete (${incompleteWhy(final, req.max_output_tokens, req.max_output_tokens !== asked ? loweredBy(guard) : undefined)})`);
    if (opts.usage) ctx.closingNote(spentLine());
    const failure = final && readResponse(final).failure;
    if (failure) throw failure;
    const calls = functionCalls(final).map(({ index: _index, ...c }) => c);
    if (calls.length) throw callsNotRun(io, chatCalls(calls), 'no --tools or --mcp was given', !!opts.json);
    // Last: an answer that does not follow --schema ends the command (exit 10), after it was counted.
    if (final) finishAnswer(io, opts, extras, responseMessage(final));
    const cut = final && (await cutBlock(opts, readResponse(final).text, cutAtLimit(final)));
    if (cut) throw cut;
  } finally {
    await Promise.all([client.close(), toolSet?.close()]);
  }
}

/** `fill`: a role's placeholders filled (src/cli/saved/role-params.ts), given the prompt if there is one. */
async function inputFrom(io: IO, opts: ResponsesOpts, args: string[], extras: Extras, fill: (prompt?: string) => string | undefined): Promise<ResponsesRequest['input']> {
  if (opts.input === undefined) {
    const prompt = fill(await promptWith(args, io, extras, 'echo hi | router responses', { binary: 'attach it with -a - (cat photo.png | router responses -a - "what is this?")' }))!;
    const content = userContent(prompt, extras, 'responses');
    return typeof content === 'string' ? content : [{ role: 'user', content }];
  }
  if (extras.attachments.length) throw usage('--attach goes with a prompt, not with --input (put the parts in the input items)');
  fill();
  if (args.length) throw usage('give the prompt either as arguments or with --input, not both');
  const parsed = await readJsonFile('--input', opts.input, io);
  if (typeof parsed !== 'string' && !Array.isArray(parsed)) throw usage('--input must hold a string or an array of input items');
  // Nothing to answer is refused as an empty prompt is, before it costs a call.
  if (Array.isArray(parsed) && parsed.length === 0) throw usage(`--input ${opts.input}: no input items`);
  if (typeof parsed === 'string' && parsed.trim() === '') throw usage(`--input ${opts.input}: the text is empty`);
  if (Array.isArray(parsed)) parsed.forEach(checkInputItem);
  return parsed as ResponsesRequest['input'];
}

/** An input item is an object; a message item (no type, or type "message") carries a role and content, as the spec says. */
function checkInputItem(item: unknown, i: number): void {
  if (!item || typeof item !== 'object' || Array.isArray(item)) throw usage(`--input: item ${i + 1} is not an object`);
  const { type, role, content } = item as Record<string, unknown>;
  if (type !== undefined && type !== 'message') return;
  if (typeof role !== 'string') throw usage(`--input: item ${i + 1} is a message without a string "role"`);
  if (typeof content !== 'string' && !Array.isArray(content)) throw usage(`--input: item ${i + 1} needs "content", a string or an array of parts`);
}

type Call = { signal: AbortSignal; routerMetadata?: boolean };

async function createResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: AnsweringOptions): Promise<ResponsesResult> {
  const r = await client.responses.create(req, call);
  const { text, failure } = readResponse(r);
  const reasoning = reasoningPrinter(io, opts);
  reasoning.write(reasoningSummary(r));
  reasoning.end();
  if (opts.json) io.json(r);
  else if (!opts.schema && (text || (!failure && !functionCalls(r).length))) {
    const shown = await shownText(io, text, opts, cutAtLimit(r));
    // With --extract, nothing to show is no line (a cut block held back, an empty one).
    if (shown || !(opts.extract || opts.extractLast)) printText(io, shown);
  }
  return r;
}

/** Text deltas (or, with --json, every event as a JSON line) to stdout; returns the final response. */
async function streamResponse(io: IO, client: RouterClient, req: ResponsesRequest, opts: ResponsesOpts, call: Call, cut: (begun: Partial<ResponsesResult>) => void, answering: (id: string) => void): Promise<ResponsesResult | undefined> {
  let final: ResponsesResult | undefined;
  // Begun (response.created named it), then cut (Ctrl-C, a reader gone, a broken stream): the service
  // charges what was generated. The ledger keeps the call without the cost it never got (usage --reconcile asks for it).
  let begun: Partial<ResponsesResult> | undefined;
  let kept = false;
  const keep = (): boolean => {
    if (kept || !begun?.id) return false;
    kept = true;
    cut({ id: begun.id, model: begun.model, usage: final?.usage });
    return true;
  };
  let forget: (() => void) | undefined;
  // A --jq that halted wants no more events: the request stops there (the service charges what it wrote).
  const jqStop = io.jsonShape.jq === undefined ? undefined : io.jqDone.signal;
  const events = await client.responses.stream(req, jqStop ? { ...call, signal: AbortSignal.any([call.signal, jqStop]) } : call);
  const reasoning = reasoningPrinter(io, opts);
  // Whether the text so far ends a line, and whether there was any.
  let endsLine = false;
  let texted = false;
  // A key said back split across two events' deltas: the end of a delta that may begin one moves to the next (redact-events.ts).
  const hide = new EventRedactor(io.secrets, io.marked);
  const lines = (evs: unknown[]) => evs.map((e) => io.jsonLine(e)).join('');
  async function* pieces() {
    try {
      for await (const ev of events) {
        if (isFinalResponse(ev)) final = ev.response;
        else if (!begun && (begun = createdBy(ev))) {
          forget = atExit(keep);
          // Named in the budget hold: a kill -9 from here on leaves a line `usage --reconcile` can settle.
          answering(begun.id!);
        }
        if (ev.type === 'response.reasoning_summary_text.delta') reasoning.write(String(ev.delta ?? ''));
        else if (isTextDelta(ev)) reasoning.end();
        if (isTextDelta(ev) && ev.delta) [texted, endsLine] = [true, ev.delta.endsWith('\n')];
        if (opts.json) yield lines(hide.push(ev));
        else if (isTextDelta(ev) && !opts.schema) yield ev.delta;
        else if (isTextDelta(ev)) withheld += ev.delta;
      }
      if (opts.json) yield lines(hide.end());
    } catch (err) {
      // The service's error event is data as the others are: printed as it came, then said on stderr.
      if (opts.json) yield lines(hide.end());
      if (opts.json && err instanceof StreamError) yield io.jsonLine(err.body);
      throw err;
    }
    // The answer's last line ended; not for an answer of function calls only.
    if (!opts.json && !opts.schema && !endsLine && (texted || !functionCalls(final).length)) yield '\n';
  }
  // An answer held back for --schema: printed as received if the stream breaks.
  let withheld = '';
  const halted = await streamToStdout(io, await shownPieces(io, pieces(), opts, () => cutAtLimit(final)), { endLine: false }).then(
    () => false,
    (err: unknown) => {
      if (jqStop?.aborted && !call.signal.aborted) return true;
      if (withheld && !call.signal.aborted) io.out(withheld.endsWith('\n') ? withheld : `${withheld}\n`);
      forget?.();
      // Said when the user cut it (Ctrl-C); a broken stream's error line is the one line it prints.
      if (keep() && !final?.usage && call.signal.aborted) io.note(`note: the answer was cut before its cost came; it is in the usage ledger without it, counted at its bound where a budget holds (router usage --reconcile asks the service)`);
      throw err;
    },
  );
  forget?.();
  reasoning.end();
  // Stopped for --jq: the response as it began (its id for the ledger), marked.
  return halted ? ({ ...begun, halted } as ResponsesResult) : final;
}

/** A response cut at its length limit (max_output_tokens). */
function cutAtLimit(r: ResponsesResult | undefined): boolean {
  return r?.status === 'incomplete' && (r.incomplete_details as { reason?: unknown } | null | undefined)?.reason === 'max_output_tokens';
}

/** The response a `response.created` event names (its id, its model). */
function createdBy(ev: ResponsesEvent): Partial<ResponsesResult> | undefined {
  const r = ev.type === 'response.created' ? (ev as unknown as { response?: Partial<ResponsesResult> }).response : undefined;
  return typeof r?.id === 'string' ? r : undefined;
}

/** Why a response stopped short, as it says, with the limit it had (and what lowered it: --max-cost, a budget). */
function incompleteWhy(final: Record<string, unknown>, limit: unknown, lowered: string | undefined): string {
  const reason = (final.incomplete_details as { reason?: unknown } | null | undefined)?.reason;
  const cut = reason === undefined || reason === 'max_output_tokens';
  if (!cut) return String(reason);
  if (typeof limit !== 'number') return 'cut at its length limit';
  return `cut at its length limit, ${counted(limit, 'output token')}${lowered ? `, ${lowered}` : '; --max-output-tokens N raises it'}`;
}

type ResponseUsage = NonNullable<NonNullable<ResponsesResult>['usage']>;

/** The usage of the rounds so far and of one more (a cost only when a round reported one). */
function summed(a: ResponseUsage | undefined, b: ResponseUsage | undefined): ResponseUsage | undefined {
  if (!a || !b) return a ?? b;
  const cost = a.cost === undefined && b.cost === undefined ? {} : { cost: roundCost((a.cost ?? 0) + (b.cost ?? 0)) };
  return { input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens, total_tokens: a.total_tokens + b.total_tokens, ...cost };
}

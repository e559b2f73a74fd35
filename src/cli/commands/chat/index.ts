/** `router chat`: a prompt to a chat model, the answer streamed to stdout (and `chat -i`, in ./repl.ts). */
import { usageFields } from '../../../kit/spend/ledger.js';
import type { ChatCompletionRequest, ChatMessage, ChatUsage } from '../../../client/types.js';
import type { RouterClient } from '../../../client/index.js';
import { deltaText, type ChatCreateOptions } from '../../../client/resources/chat.js';
import { readCompletion, type FailedAnswerError } from '../../../client/answer-reading.js';
import type { IO } from '../../io/io.js';
import { StreamError } from '../../../client/errors.js';
import { cutBlock, haltedUsageLine, printText, shownPieces, shownText, streamToStdout, usageWithSampling } from '../../io/output.js';
import { buildChatRequest, validateChatOptions } from './request.js';
import { SESSION_MEANT } from '../../flags/other-tools-words.js';
import { CHAT_FLAGS, type ChatCommandOptions, type ChatOptions } from './flags.js';
import type { RunContext } from '../../run.js';
import { defineCommand } from '../../define.js';
import { applyRoleFlag, blameRole } from '../../saved/roles.js';
import { fillRole } from '../../saved/role-params.js';
import { applyModelOptions } from '../../saved/model-options.js';
import { textOrFile } from '../../io/input.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import { boundNote, guardNext, guardSpend, limitFlagOf, loweredBy, SPEND_FLAGS } from '../../spend/spend-guard.js';
import { checkContinueId, keepConversation, openConversation, withSystem } from './conversation.js';
import { MessageAssembler, messageOf, type AssembledMessage } from '../../answers/answer-extras.js';
import { applyExtras, finishAnswer, prepareExtras, promptWith, reasoningPrinter, recordedUser, userContent } from '../../answers/request-extras.js';
import { jqOnSchemaAnswer, takeSchemaMulti } from '../../answers/schema-check.js';
import { mcpAnswers, type SamplingSend } from '../../tools/mcp-answers.js';
import { samplingSender } from '../../spend/sampling-send.js';
import { callsNotRun, chatCalls, imageInput, loadTools, mcpFrom, mcpServers, openTools } from '../../tools/tool-runner.js';
import { toolLoop } from '../../tools/tool-loop.js';
import { atExit } from '../../../internal/exit-hooks.js';
import { noteRouting } from '../../answers/routing-note.js';
import { noteAnsweredBy } from '../../answers/answered-by.js';
import { addUsage } from '../../../kit/messages.js';
import { waitingFor, waitingSpinner } from '../../io/spinner.js';
import { counted } from '../../../internal/counted.js';
import { ChunkRedactor } from '../../../internal/redact-text.js';

/** The top-level fields of the JSON printed (for lists: of each item), for `--json FIELDS`. */
const CHAT = ['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint', 'provider', 'service_tier', 'router_metadata', 'openrouter_metadata', 'alignment', 'debug'];

export const chat = defineCommand({
  name: 'chat',
  logsUsage: true,
  jsonFields: CHAT,
  summary: 'send a prompt to a chat model, streaming the answer',
  description: 'Send a prompt to a chat model and stream the answer to stdout. The prompt is the arguments and a piped stdin: stdin first, then the arguments, or at the place of a "-" among them. --no-stdin (or ROUTER_NO_STDIN=1) leaves stdin alone, as a while-read loop over a list needs. A lone "help" is refused, not sent: to send the word itself, router chat -- help.',
  args: [{ name: '[prompt...]', help: 'the prompt; "-" puts stdin at its place' }],
  flags: { ...CHAT_FLAGS, ...SPEND_FLAGS },
  examples: [
    'router chat "Name three rivers" --model local/lorem',
    'git diff | router chat -s "Review this diff" --model local/lorem',
    'router roles save terse --system "Answer in one line." --model local/echo',
    'router chat --role terse "why is the sky blue?"',
    'echo MID | router chat top - end --model local/echo  # "top\\n\\nMID\\n\\nend"',
    'router chat --json --temperature 0.2 "hi" \\\n| jq -r \'.choices[0].message.content\'',
    'router chat --max-cost 0.001 --usage "write 50 words" --model local/lorem',
    'router chat --dry-run "hi" --model local/echo',
    'router chat --model local/vision -a photo.png "What is in this picture?"',
    'router chat --model local/lorem "a city" \\\n--schema \'{"type":"object","properties":{"city":{"type":"string"}}}\'',
    'router chat --model local/tools --tools tools.json "Weather in Paris?"',
    'router chat --model local/thinker --show-reasoning "Why is the sky blue?"',
    'router chat --model local/painter "a red circle" \\\n--modalities text,image --save-images .',
  ],
  fromSettings: (s) => ({ mcp: s.mcp }),
  run: runChat,
});

async function runChat(ctx: RunContext<ChatCommandOptions>, args: string[]): Promise<void> {
  const { io, opts, signal, connect } = ctx;
  const role = await applyRoleFlag(ctx.cmd, opts, io, async () => ({ mcp: (await ctx.settings()).mcp }));
  opts.system = await textOrFile('--system', opts.system, io);
  try {
    validateChatOptions(opts);
  } catch (err) {
    throw blameRole(err, role, ctx.cmd);
  }
  checkContinueId(ctx);
  if (opts.session !== undefined && !opts.conversation && !opts.continue) io.info(SESSION_MEANT);
  takeSchemaMulti(opts);
  jqOnSchemaAnswer(opts, ctx.argv);
  if (opts.interactive) {
    fillRole(ctx.cmd, opts, role, undefined, io);
    if (opts.maxCost !== undefined || opts.dryRun) throw usage(`${opts.dryRun ? '--dry-run' : '--max-cost'} applies to one call, not to chat -i`);
    const { runRepl } = await import('./repl.js');
    return runRepl(ctx, role);
  }
  const extras = await prepareExtras(opts, io, 'chat', loadTools).catch((err: unknown) => Promise.reject(blameRole(err, role, ctx.cmd)));
  // Loaded only when used: a one-shot chat loads no node:crypto.
  const fragments = opts.fragment || opts.systemFragment ? await (await import('../../answers/fragments.js')).readFragments(opts, io, ctx.flags) : undefined;
  // As llm: fragments alone are a prompt (a piped stdin beside them still is the prompt).
  const fragmentsAlone = fragments && (fragments.user.length || fragments.system.length) && !args.length && (fragments.stdin || io.stdinTTY || !!io.noStdin);
  const prompt = fillRole(ctx.cmd, opts, role, fragmentsAlone ? '' : await promptWith(args, io, extras, 'echo hi | router chat', { onTerminal: 'to talk, router chat -i', binary: 'attach it with -a - (cat photo.png | router chat -a - "what is this?")' }), io)!;
  const earlier = await openConversation(ctx);
  ctx.useCommandModel(earlier);
  applyModelOptions(ctx.cmd, opts, (await ctx.settings()).model, io.env);
  const connected = await connect();
  (await import('../../answers/key-in-prompt.js')).sayKeyInPrompt(io, prompt);
  const { client, settings } = connected;
  const recorded = new Map<ChatMessage, ChatMessage>();
  const f = fragments || earlier?.messages.some((m) => 'fragments' in m) ? await import('../../answers/fragments.js') : undefined;
  const messages: ChatMessage[] = f ? f.sentHistory(io.env, earlier?.messages ?? [], opts.system, fragments, recorded) : withSystem(earlier?.messages ?? [], opts.system);
  const user: ChatMessage = { role: 'user', content: userContent(f && fragments ? f.fragmentedPrompt(prompt, fragments) : prompt, extras, 'chat') };
  messages.push(user);
  const req = buildChatRequest(messages, opts, settings.model);
  applyExtras(req, opts, extras, 'chat');
  if (extras.attachments.length) await (await import('../../service/attachments-taken.js')).checkAttachmentsTaken(client, io.env, settings.apiRoot, typeof req.model === 'string' ? req.model : undefined, extras.attachments);
  const call = { signal, routerMetadata: opts.routerMetadata };
  const sampling: SamplingSend = {};
  const answers = mcpAnswers(io, { roots: opts.mcpRoot, sampling: opts.mcpSampling }, sampling);
  const toolSet = await openTools({ local: extras.tools, mcp: mcpServers(io, opts.mcp, settings, !!extras.schema), mcpFrom: mcpFrom(opts.mcp, settings), env: io.env, secrets: [settings.apiKey, settings.managementKey], signal, timeoutSeconds: opts.toolTimeout ?? ctx.flags.timeout, answers }).catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  if (toolSet) req.tools = toolSet.chatTools();
  try {
    const streams = opts.stream ?? !opts.json;
    const sentWith = streams ? { stream: true, stream_options: { include_usage: true } } : undefined;
    const guarded = { body: req, sentWith, models: [req.model, ...(req.models ?? [])], limitField: 'max_completion_tokens', limitFlag: limitFlagOf(ctx, 'maxTokens', '--max-tokens'), explicitLimit: opts.maxTokens !== undefined, completes: true };
    const asked = req.max_completion_tokens;
    const guard = await guardSpend(ctx, connected, guarded);
    if (guard.dryRun) return;
    let spent: number | undefined;
    let sampled: ChatUsage | undefined;
    Object.assign(sampling, { model: req.model ?? req.models?.[0], send: samplingSender(ctx, connected, guard, () => spent ?? 0, (c, got) => ((spent = (spent ?? 0) + c), (sampled = addUsage(sampled, got)))) });
    // The usage of every round of a tool loop, summed.
    let u: ChatUsage | undefined;
    const ask = async () => {
      // Each round of a tool loop sends a longer prompt: it is held to what the cap has left.
      if (spent !== undefined) await guardNext(ctx, connected, guard, guarded, spent);
      const stopWaiting = waitingSpinner(io, waitingFor(req.model ?? req.models?.[0]));
      const a = await (streams ? streamChat(io, client, req, opts, call, (id, model, got) => ctx.logUsage({ endpoint: '/v1/chat/completions', model: model ?? req.model ?? req.models?.[0], id, ...usageFields(got) }), (id) => ctx.answering(id, '/v1/chat/completions')) : completeChat(io, client, req, opts, { ...call, answering: (id) => ctx.answering(id, '/v1/chat/completions') })).finally(stopWaiting);
      spent = (spent ?? 0) + (typeof a.usage?.cost === 'number' ? a.usage.cost : (guard.bound ?? 0));
      ctx.logUsage({ endpoint: '/v1/chat/completions', model: a.model ?? req.model ?? req.models?.[0], ...(a.id ? { id: a.id } : {}), ...usageFields(a.usage) });
      u = addUsage(u, a.usage);
      if (a.failure) throw a.failure;
      if (a.finish === 'length') io.note(`note: the answer was cut at its length limit${lengthLimit(req.max_completion_tokens, asked, loweredBy(guard))}`);
      return a;
    };
    const spentLine = () => usageWithSampling(u && { input: u.prompt_tokens, output: u.completion_tokens, total: u.total_tokens, cost: u.cost }, sampled, ['prompt', 'completion']) + boundNote(guard);
    let answer = await ask();
    noteAnsweredBy(io, opts, req.model ?? req.models?.[0], answer.model);
    // --jq halted: the answer stops where the filter did; none of it is kept in a conversation or checked.
    if (answer.halted) {
      // Asked for by name or with -c, yet not kept: said, so that the next -c is no surprise.
      if (opts.continue || opts.conversation) io.note(`warning: this turn was not kept in conversation ${earlier?.id ?? opts.conversation} (--jq halted: the answer was cut there)`);
      if (opts.usage) ctx.closingNote(u ? spentLine() : haltedUsageLine(answer.id, ctx.logging) + boundNote(guard));
      return;
    }
    // Calls left to the caller end the command (exit 11) once --usage has counted what they cost.
    let notRun: CliError | undefined;
    try {
      if (toolSet) answer = await toolLoop(io, { set: toolSet, maxRounds: opts.maxToolRounds ?? 8, approve: !!opts.approve, json: !!opts.json, signal, timeout: opts.toolTimeout ?? ctx.flags.timeout, timeoutFlag: opts.toolTimeout === undefined ? '--timeout' : '--tool-timeout', takesImages: imageInput(client, io.env, settings.apiRoot, req.model, signal) }, messages, answer, ask);
      else if (answer.message.tool_calls?.length) throw callsNotRun(io, chatCalls(answer.message.tool_calls), 'no --tools was given', !!opts.json);
    } catch (err) {
      // A later round refused (--max-cost, a budget) or failed: what the rounds before it cost is still said.
      if (!(err instanceof CliError && err.exitCode === EXIT.TOOL_CALLS)) {
        if (opts.usage) ctx.closingNote(spentLine());
        throw err;
      }
      notRun = err;
    }
    if (!notRun && f && fragments && ctx.logging) f.keepFragments(io, fragments);
    if (!notRun) keepConversation(ctx, earlier, req.model, messages.map((m) => (m === user ? (f && fragments ? f.keptWithFragments(recordedUser(prompt, extras), fragments) : recordedUser(prompt, extras)) : (recorded.get(m) ?? m))), answer.text, prompt || fragments?.user[0]?.source || fragments?.system[0]?.source || '', answer.model);
    if (opts.usage) ctx.closingNote(spentLine());
    if (notRun) throw notRun;
    // Last: an answer that does not follow --schema ends the command (exit 10), after it was kept and counted.
    finishAnswer(io, opts, extras, answer.message);
    const cut = await cutBlock(opts, answer.text, answer.finish === 'length');
    if (cut) throw cut;
  } finally {
    await Promise.all([client.close(), toolSet?.close()]);
  }
}

type Call = { signal: AbortSignal; routerMetadata?: boolean };

/** The limit an answer was cut at, for the note that says so: the tokens, and what lowered them (--max-cost, a budget). */
function lengthLimit(limit: number | undefined, asked: number | undefined, lowered: string): string {
  if (limit === undefined) return " (the model's most output tokens)";
  return ` (${counted(limit, 'token')}${limit !== asked ? `, ${lowered}` : '; --max-tokens N raises it'})`;
}

interface Answer {
  text: string;
  /** The model that answered, as the answer names it. */
  model?: string;
  /** The answer's generation id (the ledger keeps it). */
  id?: string;
  usage: ChatUsage | undefined;
  /** Why the answer ended (finish_reason): "length" is an answer cut at its limit. */
  finish?: string | null;
  /** What the answer says about itself when it failed (printed first, then reported). */
  failure?: FailedAnswerError;
  message: AssembledMessage;
  /** The stream was stopped once --jq halted (or failed): the rest of the answer was not wanted. */
  halted?: boolean;
}

async function completeChat(io: IO, client: RouterClient, req: ChatCompletionRequest, opts: ChatOptions, call: ChatCreateOptions): Promise<Answer> {
  const completion = await client.chat.create(req, call);
  const { text, failure } = readCompletion(completion);
  const message = messageOf(completion.choices[0]?.message);
  const reasoning = reasoningPrinter(io, opts);
  reasoning.write(message.reasoning ?? '');
  reasoning.end();
  if (opts.json) io.json(completion);
  else if (!opts.schema && (text || (!failure && !message.tool_calls))) {
    const shown = await shownText(io, text, opts, completion.choices[0]?.finish_reason === 'length');
    // With --extract, nothing to show is no line (a cut block held back, an empty one).
    if (shown || !(opts.extract || opts.extractLast)) printText(io, shown);
  }
  if (opts.routerMetadata && !opts.json) noteRouting(io, completion);
  return { text, usage: completion.usage, model: completion.model || undefined, id: completion.id || undefined, failure, message, finish: completion.choices[0]?.finish_reason };
}

/** Text deltas (or, with --json, every chunk as a JSON line) to stdout as they arrive. */
async function streamChat(io: IO, client: RouterClient, req: ChatCompletionRequest, opts: ChatOptions, call: Call, cut: (id: string, model?: string, usage?: ChatUsage) => void, answering: (id: string) => void): Promise<Answer> {
  let usage: ChatUsage | undefined;
  let model: string | undefined;
  let id: string | undefined;
  let finish: string | null | undefined;
  let text = '';
  // Whether the text so far ends a line (asked of the last piece: text.endsWith would copy the whole answer).
  let endsLine = false;
  const assembler = new MessageAssembler();
  const reasoning = reasoningPrinter(io, opts);
  // Begun, then cut (Ctrl-C, a reader gone: `| head` exits at once, a broken stream): the service charges
  // what was generated. The ledger keeps the call without the cost it never got (usage --reconcile asks for it).
  let kept = false;
  const keep = (): boolean => {
    if (kept || !id) return false;
    kept = true;
    cut(id, model, usage);
    return true;
  };
  let forget: (() => void) | undefined;
  // A --jq that halted wants no more chunks: the request stops there (the service charges what it wrote).
  const jqStop = io.jsonShape.jq === undefined ? undefined : io.jqDone.signal;
  const streamCall = jqStop ? { ...call, signal: AbortSignal.any([call.signal, jqStop]) } : call;
  const chunks = opts.json ? await client.chat.stream(req, streamCall) : await client.chat.streamText(req, streamCall);
  // A key in use said back split across two chunks' text: each chunk's end that may begin one waits for the next.
  const hide = new ChunkRedactor(io.secrets, io.marked);
  const leftLines = () => hide.end().map((c) => io.jsonLine(c)).join('');
  // What one read of the network brought goes out in one write.
  async function* pieces() {
    try {
      for await (const batch of chunks.batches()) {
        let out = '';
        for (const chunk of batch) {
          if (chunk.usage) usage = chunk.usage;
          if (chunk.model) model ??= chunk.model;
          if (chunk.id && !id) {
            id = chunk.id;
            forget ??= atExit(keep);
            answering(id);
          }
          finish = chunk.choices?.[0]?.finish_reason ?? finish;
          const content = deltaText(chunk);
          text += content;
          if (content) endsLine = content.endsWith('\n');
          reasoning.write(assembler.add(chunk));
          if (opts.json) out += io.jsonLine(hide.push(chunk));
          else {
            if (opts.routerMetadata && (chunk.router_metadata || chunk.openrouter_metadata)) noteRouting(io, chunk);
            if (content) reasoning.end();
            // An answer that must follow --schema is printed once checked.
            if (!opts.schema) out += content;
          }
        }
        yield out;
      }
      if (opts.json) yield leftLines();
    } catch (err) {
      // The service's error event is data as the others are: printed as it came, then said on stderr.
      if (opts.json) yield leftLines();
      if (opts.json && err instanceof StreamError) yield io.jsonLine(err.body);
      throw err;
    }
    // The answer's last line ended; not for an answer of tool calls only, or one printed once checked.
    if (!opts.json && !opts.schema && !endsLine && (text || !assembler.message().tool_calls)) yield '\n';
  }
  const halted = await streamToStdout(io, await shownPieces(io, pieces(), opts, () => finish === 'length'), { endLine: false }).then(
    () => false,
    (err: unknown) => {
      if (jqStop?.aborted && !call.signal.aborted) return true;
      // A stream that broke ends with the text that came, an answer held back for --schema too.
      if (opts.schema && !opts.json && text && !call.signal.aborted) io.out(text.endsWith('\n') ? text : `${text}\n`);
      forget?.();
      // Said when the user cut it (Ctrl-C); a broken stream's error line is the one line it prints.
      if (keep() && !usage && call.signal.aborted) io.note(`note: the answer was cut before its cost came; it is in the usage ledger without it, counted at its bound where a budget holds (router usage --reconcile asks the service)`);
      throw err;
    },
  );
  forget?.();
  reasoning.end();
  return { text, usage, model, id, message: assembler.message(), finish, halted };
}

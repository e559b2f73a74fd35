import { Option, type Command } from '../commander.js';
import type { ChatCompletionRequest, ChatMessage, ChatUsage } from '../../client/types.js';
import { action, type RunContext } from '../run.js';
import { addRoutingFlags, collect, commaList, integerIn, keyValue, numberIn } from '../options.js';
import { usage } from '../exit-codes.js';
import { checkMetadataFlags, providerFrom, textFromArgs } from '../input.js';

export const REASONING_EFFORTS = ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none'];
export const SERVICE_TIERS = ['auto', 'default', 'fast', 'flex', 'priority', 'scale', 'ultrafast'];

export interface ChatOptions {
  model?: string;
  models?: string[];
  system?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  topA?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  seed?: number;
  stop?: string[];
  logprobs?: boolean;
  topLogprobs?: number;
  logitBias?: Record<string, string>;
  responseFormat?: string;
  reasoningEffort?: string;
  serviceTier?: string;
  session?: string;
  metadata?: Record<string, string>;
  user?: string;
  providerOnly?: string[];
  providerOrder?: string[];
  providerIgnore?: string[];
  fallbacks?: boolean;
  routerMetadata?: boolean;
  stream?: boolean;
  json?: boolean;
  usage?: boolean;
  interactive?: boolean;
}

export function registerChat(program: Command): void {
  addRoutingFlags(
  program
    .command('chat')
    .summary('send a prompt to a chat model, streaming the answer')
    .description('Send a prompt (arguments, or stdin when there are none) to a chat model and stream the answer to stdout.')
    .argument('[prompt...]', 'the prompt; "-" or nothing reads stdin')
    .option('-m, --model <id>', 'model, <author>/<slug> (default: the profile\'s model)')
    .option('--models <ids>', 'fallback models, comma-separated, tried in order', commaList)
    .option('-s, --system <text>', 'system message')
    .option('--max-tokens <n>', 'maximum completion tokens (>= 1)', integerIn(1))
    .option('-t, --temperature <t>', 'sampling temperature, 0 to 2', numberIn(0, 2))
    .option('--top-p <p>', 'nucleus sampling, 0 to 1', numberIn(0, 1))
    .option('--top-k <k>', 'top-k sampling (>= 0)', integerIn(0))
    .option('--min-p <p>', 'minimum probability relative to the top token, 0 to 1', numberIn(0, 1))
    .option('--top-a <p>', 'second relative-probability threshold, 0 to 1', numberIn(0, 1))
    .option('--frequency-penalty <x>', '-2 to 2', numberIn(-2, 2))
    .option('--presence-penalty <x>', '-2 to 2', numberIn(-2, 2))
    .option('--repetition-penalty <x>', '0 to 2 (1 = none)', numberIn(0, 2))
    .option('--seed <n>', 'random seed (integer)', integerIn(Number.MIN_SAFE_INTEGER))
    .option('--stop <seq>', 'stop sequence, repeatable (at most 4)', collect)
    .option('--logprobs', 'return log probabilities (see --json)')
    .option('--top-logprobs <n>', 'top log probabilities per token, 0 to 20', integerIn(0, 20))
    .option('--logit-bias <token=bias>', 'token logit bias, repeatable', keyValue)
    .addOption(new Option('--response-format <type>', 'response format').choices(['text', 'json_object']))
    .addOption(new Option('--reasoning-effort <level>', 'reasoning effort').choices(REASONING_EFFORTS))
    .addOption(new Option('--service-tier <tier>', 'service tier').choices(SERVICE_TIERS))
    .option('--stream', 'stream (default for text; with --json, print chunks as JSONL)')
    .option('--no-stream', 'wait for the whole answer')
    .option('--json', 'print the chat.completion object (or chunks as JSONL with --stream)')
    .option('--usage', 'print token usage and cost to stderr')
    .option('-i, --interactive', 'conversation in a REPL (/exit, /model, /system, /save FILE)'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ router chat "Name three rivers"
  $ git diff | router chat -s "Review this diff" --model local/lorem
  $ router chat --json --temperature 0.2 "hi" | jq -r '.choices[0].message.content'`,
    )
    .action(action<ChatOptions, [string[]]>(runChat));
}

export function validateChatOptions(o: ChatOptions): void {
  if (o.stop && o.stop.length > 4) throw usage('--stop may be given at most 4 times');
  checkMetadataFlags(o.metadata);
  for (const [token, bias] of Object.entries(o.logitBias ?? {})) {
    if (!Number.isFinite(Number(bias)) || bias.trim() === '') throw usage(`--logit-bias ${token}: "${bias}" is not a number`);
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
  if (o.logitBias) req.logit_bias = Object.fromEntries(Object.entries(o.logitBias).map(([k, v]) => [k, Number(v)]));
  if (o.responseFormat) req.response_format = { type: o.responseFormat };
  if (o.reasoningEffort) req.reasoning = { effort: o.reasoningEffort };
  if (o.serviceTier) req.service_tier = o.serviceTier;
  if (o.session) req.session_id = o.session;
  if (o.metadata) req.metadata = o.metadata;
  if (o.user) req.user = o.user;
  const provider = providerFrom(o);
  if (provider) req.provider = provider;
  return req;
}

export function formatUsage(u: ChatUsage | undefined): string {
  if (!u) return 'usage: not reported';
  const cost = typeof u.cost === 'number' ? `, cost $${u.cost.toFixed(6)}` : '';
  return `usage: ${u.prompt_tokens} prompt + ${u.completion_tokens} completion = ${u.total_tokens} tokens${cost}`;
}

async function runChat(ctx: RunContext<ChatOptions>, args: string[]): Promise<void> {
  const { io, flags, opts, signal } = ctx;
  validateChatOptions(opts);
  if (opts.interactive) {
    const { runRepl } = await import('./chat-repl.js');
    return runRepl(ctx);
  }
  const prompt = await textFromArgs(args, io);
  const { connect } = await import('../context.js');
  const { client, settings } = await connect(io, flags, { model: opts.model });
  const messages: ChatMessage[] = [];
  if (opts.system) messages.push({ role: 'system', content: opts.system });
  messages.push({ role: 'user', content: prompt });
  const req = buildChatRequest(messages, opts, settings.model);
  const call = { signal, routerMetadata: opts.routerMetadata };
  try {
    const stream = opts.stream ?? !opts.json;
    if (!stream) {
      const completion = await client.chat.create(req, call);
      if (opts.json) io.json(completion);
      else {
        const text = completion.choices[0]?.message.content ?? '';
        io.out(text.endsWith('\n') ? text : `${text}\n`);
      }
      if (opts.routerMetadata && !opts.json && completion.router_metadata) io.note(`router: ${completion.router_metadata.summary}`);
      if (opts.usage) io.note(formatUsage(completion.usage));
      return;
    }
    let usageSeen: ChatUsage | undefined;
    let last = '';
    const writer = io.streamWriter();
    try {
      for await (const chunk of await client.chat.stream(req, call)) {
        if (chunk.usage) usageSeen = chunk.usage;
        if (opts.json) {
          await writer.write(`${JSON.stringify(chunk)}\n`);
          continue;
        }
        if (chunk.router_metadata && opts.routerMetadata) io.note(`router: ${chunk.router_metadata.summary}`);
        const piece = chunk.choices[0]?.delta.content;
        if (piece) {
          last = piece;
          await writer.write(piece);
        }
      }
      if (!opts.json && !last.endsWith('\n')) await writer.write('\n');
    } finally {
      // What arrived before a failure still reaches stdout.
      await writer.end();
    }
    if (opts.usage) io.note(formatUsage(usageSeen));
  } finally {
    await client.close();
  }
}

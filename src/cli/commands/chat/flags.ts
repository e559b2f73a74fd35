import { anyNumber, collect, GENERATION_FLAGS, integerIn, keyValue, multiplier, nonEmpty, paramValue, numberIn, OUTPUT_FLAGS, REASONING_EFFORT_FLAG, ROUTING_FLAGS, stopSequence } from '../../flags/options.js';
import type { FlagTable, FlagValues } from '../../flags/flags.js';
import { ANSWER_FLAGS, TOOL_FLAGS } from '../../flags/answer-flags.js';
import type { SpendOptions } from '../../spend/spend-guard.js';

const SERVICE_TIERS = ['auto', 'default', 'fast', 'flex', 'priority', 'scale', 'ultrafast'] as const;

/** The flags of `router chat` (but the spend flags), in help order: also what a role may hold. */
export const CHAT_FLAGS = {
  ...GENERATION_FLAGS,
  role: { flags: '--role <name>', help: 'apply a role: its settings and system prompt (router roles list); flags given here win', parse: nonEmpty, complete: 'roles' },
  param: { flags: '--param <name=value>', help: "a value for the role's $NAME, repeatable: --param lang French (or lang=French)", parse: paramValue },
  system: { flags: '-s, --system <text>', help: 'system message; @FILE reads it from a file, @- from stdin (@@ for a leading @)', parse: nonEmpty },
  fragment: { flags: '-f, --fragment <source>', help: 'put a file, an http(s) URL, a kept fragment (alias or hash) or stdin ("-") before the prompt, kept once by hash (router fragments); repeatable', parse: collect },
  systemFragment: { flags: '--sf, --system-fragment <source>', help: 'the same, before the system message', parse: collect },
  maxTokens: { flags: '--max-tokens <n>', help: 'maximum completion tokens (>= 1)', parse: integerIn(1) },
  // Provider-dependent in the spec: the CLI checks the type only.
  topK: { flags: '--top-k <k>', help: 'top-k sampling (provider-dependent)', parse: integerIn(Number.MIN_SAFE_INTEGER) },
  minP: { flags: '--min-p <p>', help: 'minimum probability relative to the top token (provider-dependent)', parse: anyNumber },
  topA: { flags: '--top-a <p>', help: 'second relative-probability threshold (provider-dependent)', parse: anyNumber },
  frequencyPenalty: { flags: '--frequency-penalty <x>', help: '-2 to 2', parse: numberIn(-2, 2) },
  presencePenalty: { flags: '--presence-penalty <x>', help: '-2 to 2', parse: numberIn(-2, 2) },
  repetitionPenalty: { flags: '--repetition-penalty <x>', help: 'a multiplier over 0: 1 = none, above 1 penalizes repeats more (provider-dependent)', parse: multiplier },
  seed: { flags: '--seed <n>', help: 'random seed (integer)', parse: integerIn(Number.MIN_SAFE_INTEGER) },
  stop: { flags: '--stop <seq>', help: 'stop sequence, repeatable (at most 4)', parse: stopSequence },
  logprobs: { flags: '--logprobs', help: 'return log probabilities (see --json)' },
  topLogprobs: { flags: '--top-logprobs <n>', help: 'top log probabilities per token, 0 to 20', parse: integerIn(0, 20) },
  logitBias: { flags: '--logit-bias <token=bias>', help: 'token logit bias, repeatable', parse: keyValue },
  responseFormat: { flags: '--response-format <type>', help: 'response format', choices: ['text', 'json_object'] as const },
  reasoningEffort: REASONING_EFFORT_FLAG,
  serviceTier: { flags: '--service-tier <tier>', help: 'service tier', choices: SERVICE_TIERS },
  stream: [
    { flags: '--stream', help: 'stream (default for text; with --json, print chunks as JSONL)', oneCall: true },
    { flags: '--no-stream', help: 'wait for the whole answer' },
  ],
  raw: OUTPUT_FLAGS.raw,
  json: { flags: '--json', help: 'print the chat.completion object (or chunks as JSONL with --stream)', oneCall: true },
  usage: OUTPUT_FLAGS.usage,
  interactive: { flags: '-i, --interactive', help: 'conversation in a REPL (/exit, /model, /system, /save FILE)' },
  continue: { flags: '-c, --continue', help: 'continue the last conversation (each chat is kept unless --no-log)' },
  conversation: { flags: '--conversation <id>', help: 'continue the conversation ID, or start one with that name', complete: 'conversations' },
  ...ANSWER_FLAGS,
  ...TOOL_FLAGS,
  ...ROUTING_FLAGS,
} as const satisfies FlagTable;

export type ChatOptions = FlagValues<typeof CHAT_FLAGS>;

/** The options of `router chat`: its table's and the spend flags'. */
export type ChatCommandOptions = ChatOptions & SpendOptions;

/**
 * The tool loop for programs: a chat call, the model's tool calls run, and the call made again with
 * their results until the model answers in text. Under a spend guard every round is checked
 * before it is sent (held to what the cap has left once the earlier rounds' cost is taken off): a
 * round that could pass the cap is not sent, and the loop ends with the guard's typed error. More
 * rounds than `maxRounds` is a `ToolCallsError` (`max_rounds`) with the calls not run.
 */
import type { RouterClient } from '../client/index.js';
import { credentialsInUse } from '../client/credentials.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from '../client/types.js';
import type { Tool, ToolProgress } from './tool.js';
import type { ToolSet } from './toolset.js';
import { ResultBudget, runToolCall, type CallOutcome, type ToolCallRequest } from './tool-calls.js';
import { guardedChat } from './spend/guarded-chat.js';
import { chatToolLoop } from './tool-loop.js';
import { ToolCallsError } from './errors.js';
import type { AssembledMessage } from '../client/message-assembler.js';
import type { SpendGuard } from './spend/spend-guard.js';
import { counted } from '../internal/counted.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { checkCounts, checkTimeout } from './checked-options.js';

/** The names of ChatToolsOptions's members, checked against it both ways (a new option is a name here too). */
const CHAT_TOOLS_OPTIONS = optionNames<ChatToolsOptions>()({ tools: 1, guard: 1, maxRounds: 1, signal: 1, timeoutMs: 1, results: 1, approve: 1, on: 1, command: 1 });

export interface ChatToolsOptions {
  /** The tools the model may call: a ToolSet, or tools by name. */
  tools: ToolSet | Map<string, Tool>;
  /** Checks each round before it is sent, and records what it cost; its hold is released when the loop ends. */
  guard?: SpendGuard | undefined;
  /** Rounds of tool calls at most (8 if absent). */
  maxRounds?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Each tool call ends after this long. */
  timeoutMs?: number | undefined;
  /** The bound of all results of the loop together. */
  results?: ResultBudget | undefined;
  approve?: ((call: ToolCallRequest) => Promise<boolean>) | undefined;
  /** Told of each answer, each call run and how a long call goes (where its tool says so). */
  on?: { answer?(completion: ChatCompletion, round: number): void; call?(call: ToolCallRequest, outcome: CallOutcome): void; progress?(call: ToolCallRequest, update: ToolProgress): void } | undefined;
  /** How the ledger names the work (its `command`): `kit` if absent. */
  command?: string | undefined;
}

export interface ChatToolsResult {
  /** The last answer: the model's text. */
  completion: ChatCompletion;
  /** The conversation as sent, the tool calls and their results included (the last answer not). */
  messages: ChatMessage[];
  /** Rounds of tool calls run. */
  rounds: number;
}

function declarations(tools: Map<string, Tool>): Record<string, unknown>[] {
  return [...tools.values()].map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} } } }));
}

/** Runs `request` and the model's tool calls until it answers in text. The request's `messages` are not changed. */
export async function chatWithTools(client: RouterClient, request: ChatCompletionRequest, opts: ChatToolsOptions): Promise<ChatToolsResult> {
  checkOptions('chatWithTools()', opts, CHAT_TOOLS_OPTIONS);
  checkCounts('chatWithTools()', opts, ['maxRounds'], 0);
  checkTimeout('chatWithTools()', opts, 'timeoutMs');
  const set = opts.tools instanceof Map ? undefined : opts.tools;
  const tools = set ? set.tools : (opts.tools as Map<string, Tool>);
  const messages = [...request.messages];
  const req: ChatCompletionRequest = { ...request, messages, tools: request.tools ?? (set ? (set.chatTools() as ChatCompletionRequest['tools']) : (declarations(tools) as ChatCompletionRequest['tools'])) };
  const maxRounds = opts.maxRounds ?? 8;
  const results = opts.results ?? new ResultBudget();
  const signal = opts.signal ?? new AbortController().signal;
  const { guard } = opts;
  let rounds = 0;
  const send = async () => {
    // Before each request, the first included: a round that could pass what is left is not sent.
    const completion = await guardedChat(guard, req, request.max_completion_tokens !== undefined, opts.command ?? 'kit', () => client.chat.create(req, { signal }), signal);
    opts.on?.answer?.(completion, rounds);
    return { completion, message: (completion.choices[0]?.message ?? { role: 'assistant', content: null }) as AssembledMessage };
  };
  const run = async (calls: ToolCallRequest[], round: number): Promise<CallOutcome[]> => {
    if (round > maxRounds) throw new ToolCallsError('max_rounds', calls, `${counted(maxRounds, 'round')} of tool calls reached`);
    const outcomes: CallOutcome[] = [];
    for (const call of calls) {
      const outcome = await runToolCall(tools, call, { signal, timeoutMs: opts.timeoutMs, timeoutName: 'timeoutMs', budget: results, approve: opts.approve, secrets: credentialsInUse(), progress: opts.on?.progress });
      opts.on?.call?.(call, outcome);
      outcomes.push(outcome);
    }
    rounds = round;
    return outcomes;
  };
  try {
    const last = await chatToolLoop(messages, await send(), send, { run });
    return { completion: last.completion, messages, rounds };
  } finally {
    guard?.release();
  }
}

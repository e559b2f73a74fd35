/**
 * The tool loop for programs: a chat call, the model's tool calls run, and the call made again with
 * their results until the model answers in text. Under a spend guard every round is checked
 * before it is sent (held to what the cap has left once the earlier rounds' cost is taken off): a
 * round that could pass the cap is not sent, and the loop ends with the guard's typed error.
 */
import type { RouterClient } from '../client/index.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from '../client/types.js';
import type { Tool } from './tool.js';
import type { ToolSet } from './toolset.js';
import { ResultBudget, runToolCall, type CallOutcome, type ToolCallRequest } from './tool-calls.js';
import { usageFields } from './spend/ledger.js';
import type { SpendGuard } from './spend/spend-guard.js';

/** The model asked for more rounds of tool calls than the loop allows; its calls were not run. */
export class ToolRoundsExceeded extends Error {
  readonly code = 'max_tool_rounds';
  constructor(
    readonly maxRounds: number,
    /** The calls the model asked for last, not run. */
    readonly calls: ToolCallRequest[],
  ) {
    super(`the model asked for ${calls.length === 1 ? 'a tool call' : `${calls.length} tool calls`} that ${calls.length === 1 ? 'was' : 'were'} not run (the most rounds, ${maxRounds}, reached)`);
    this.name = 'ToolRoundsExceeded';
  }
}

export interface ChatToolsOptions {
  /** The tools the model may call: a ToolSet, or tools by name. */
  tools: ToolSet | Map<string, Tool>;
  /** Checks each round before it is sent, and records what it cost; its hold is released when the loop ends. */
  guard?: SpendGuard;
  /** Rounds of tool calls at most (8 if absent). */
  maxRounds?: number;
  signal?: AbortSignal;
  /** Each tool call ends after this long. */
  timeoutMs?: number;
  /** The bound of all results of the loop together. */
  results?: ResultBudget;
  approve?: (call: ToolCallRequest) => Promise<boolean>;
  /** Told of each answer and each call run. */
  on?: { answer?(completion: ChatCompletion, round: number): void; call?(call: ToolCallRequest, outcome: CallOutcome): void };
  /** How the ledger names the work (its `command`): `kit` if absent. */
  command?: string;
}

export interface ChatToolsResult {
  /** The last answer: the model's text. */
  completion: ChatCompletion;
  /** The conversation as sent, the tool calls and their results included (the last answer not). */
  messages: ChatMessage[];
  /** Rounds of tool calls run. */
  rounds: number;
}

type ModelCall = { id: string; type?: string; function: { name: string; arguments: string } };

function declarations(tools: Map<string, Tool>): Record<string, unknown>[] {
  return [...tools.values()].map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} } } }));
}

/** Runs `request` and the model's tool calls until it answers in text. The request's `messages` are not changed. */
export async function chatWithTools(client: RouterClient, request: ChatCompletionRequest, opts: ChatToolsOptions): Promise<ChatToolsResult> {
  const set = opts.tools instanceof Map ? undefined : opts.tools;
  const tools = set ? set.tools : (opts.tools as Map<string, Tool>);
  const messages = [...request.messages];
  const req: ChatCompletionRequest = { ...request, messages, tools: request.tools ?? (set ? (set.chatTools() as ChatCompletionRequest['tools']) : (declarations(tools) as ChatCompletionRequest['tools'])) };
  const maxRounds = opts.maxRounds ?? 8;
  const results = opts.results ?? new ResultBudget();
  const signal = opts.signal ?? new AbortController().signal;
  const { guard } = opts;
  try {
    for (let round = 0; ; round++) {
      // Before each request, the first included: a round that could pass what is left is not sent.
      if (guard) await guard.check({ body: req, models: [req.model, ...(req.models ?? [])], limitField: 'max_completion_tokens', limitFlag: 'max_completion_tokens', explicitLimit: request.max_completion_tokens !== undefined, completes: true });
      const completion = await client.chat.create(req, { signal });
      guard?.record({ command: opts.command ?? 'kit', endpoint: '/v1/chat/completions', model: completion.model || req.model, ...(completion.id ? { id: completion.id } : {}), ...usageFields(completion.usage as unknown as Record<string, unknown>) });
      opts.on?.answer?.(completion, round);
      const message = completion.choices[0]?.message;
      const asked = (message?.tool_calls ?? []) as ModelCall[];
      if (!asked.length) return { completion, messages, rounds: round };
      const calls = asked.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      if (round >= maxRounds) throw new ToolRoundsExceeded(maxRounds, calls);
      messages.push({ role: 'assistant', content: message?.content ?? null, tool_calls: asked });
      for (const call of calls) {
        const outcome = await runToolCall(tools, call, { signal, timeoutMs: opts.timeoutMs, budget: results, approve: opts.approve });
        opts.on?.call?.(call, outcome);
        messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.text });
      }
    }
  } finally {
    guard?.release();
  }
}

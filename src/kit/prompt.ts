/**
 * One prompt to a chat model, as a program asks it: the prompt with its attachments, a schema the
 * answer must follow, and the tools the model may call, run in a loop until it answers in text.
 */
import type { RouterClient } from '../client/index.js';
import { credentialsInUse } from '../client/credentials.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage, ChatUsage } from '../client/types.js';
import type { Attachment } from './attachments.js';
import { addUsage, recordedUserMessage, userMessage, withSystem } from './messages.js';
import { ToolCallsError } from './errors.js';
import { answerSchema, chatResponseFormat, checkAnswer, type AnswerSchema } from './schema.js';
import { DEFAULT_RESULTS_BYTES, ResultBudget, runToolCall, type CallOutcome, type ToolCallRequest } from './tool-calls.js';
import type { Tool, ToolProgress } from './tool.js';
import { ToolSet } from './toolset.js';
import { chatToolLoop } from './tool-loop.js';
import { guardedChat } from './spend/guarded-chat.js';
import type { SpendGuard } from './spend/spend-guard.js';
import type { SchemaValue } from './schema-type.js';
import { counted } from '../internal/counted.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { ValidationError } from '../client/errors.js';
import { shownGiven } from '../internal/shape.js';
import { checkAttachments, checkCounts, checkTimeout } from './checked-options.js';

/** The names of PromptOptions' members, checked against it both ways (a new option is a name here too). */
const PROMPT_OPTIONS = optionNames<PromptOptions>()({ model: 1, system: 1, attachments: 1, schema: 1, tools: 1, maxToolRounds: 1, toolTimeoutMs: 1, resultsBytes: 1, approve: 1, toolImages: 1, request: 1, signal: 1, guard: 1, beforeRequest: 1, onText: 1, onToolCall: 1, onToolProgress: 1 });

export interface PromptOptions {
  /** The model of this prompt, when it is not the conversation's (a conversation keeps attachments by reference, so any model reads it). */
  model?: string | undefined;
  /** The system message (replaces a conversation's). */
  system?: string | undefined;
  attachments?: Attachment[] | undefined;
  /** A JSON schema the answer must follow (an object, or one made ready by `answerSchema`). */
  schema?: AnswerSchema | Record<string, unknown> | undefined;
  /** Tools the model may call: a `ToolSet` (left open) or tools (a set made and closed for this prompt). */
  tools?: ToolSet | Tool[] | undefined;
  /** The most rounds of tool calls (default 8); one more is a `ToolCallsError` (`max_rounds`). */
  maxToolRounds?: number | undefined;
  /** Each tool call ends after this long (default 300,000 ms). */
  toolTimeoutMs?: number | undefined;
  /** The most bytes of all tool results of this prompt together (default 64 MiB). */
  resultsBytes?: number | undefined;
  /** Asked before each tool call: false tells the model the call was declined. */
  approve?: ((call: ToolCallRequest) => Promise<boolean>) | undefined;
  /** Images tool results hold, sent on to the model (only to one that takes image input); default false. */
  toolImages?: boolean | undefined;
  /** More of the request: `temperature`, `max_completion_tokens`, `provider`, … */
  request?: Omit<Partial<ChatCompletionRequest>, 'messages' | 'model' | 'tools' | 'response_format'> | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Checks each request (each round of a tool loop) before it is sent, held to what the cap and budgets have left,
   * and records what it cost: a round that could pass them is not sent (a `SpendError`). Released when the prompt ends.
   */
  guard?: SpendGuard | undefined;
  /** Called before each request (each round of a tool loop) with the cost so far in credits: throw to stop. */
  beforeRequest?: ((request: ChatCompletionRequest, spent: number) => void | Promise<void>) | undefined;
  /** Streams the answer: called with each piece of its text as it arrives (the answer resolves whole as well). */
  onText?: ((text: string) => void) | undefined;
  /** Called after each tool call with what came of it. */
  onToolCall?: ((call: ToolCallRequest, outcome: CallOutcome) => void) | undefined;
  /** Told how a long tool call goes, where its tool says so (an MCP server's progress notifications, a task's status words). */
  onToolProgress?: ((call: ToolCallRequest, update: ToolProgress) => void) | undefined;
}

export interface PromptResponse {
  /** The answer's text. */
  text: string;
  /** With a schema: the answer's value, checked against it. */
  json?: unknown;
  /** The model that answered, as the answer names it. */
  model?: string | undefined;
  /** The usage of every request of this prompt, summed (`cost` in credits, when the service says it). */
  usage?: ChatUsage | undefined;
  /** Every tool call run, with what came of it. */
  toolCalls: { call: ToolCallRequest; outcome: CallOutcome }[];
  /** The messages this prompt added: the user's (attachments by reference), the tool rounds, the answer. */
  messages: ChatMessage[];
  /** The last completion as the service sent it. */
  completion: ChatCompletion;
}

/** A streamed answer, its pieces of text given to `onText`, joined into the completion the non-streamed answer is. */
async function streamed(client: RouterClient, req: ChatCompletionRequest, signal: AbortSignal, onText: (text: string) => void): Promise<ChatCompletion> {
  const [{ MessageAssembler }, { deltaText }] = await Promise.all([import('../client/message-assembler.js'), import('../client/resources/chat.js')]);
  const assembler = new MessageAssembler();
  const done: Partial<ChatCompletion> & { finish?: string | null } = {};
  for await (const chunk of await client.chat.stream(req, { signal })) {
    assembler.add(chunk);
    const text = deltaText(chunk);
    if (text) onText(text);
    if (chunk.usage) done.usage = chunk.usage;
    done.id ??= chunk.id;
    done.model ??= chunk.model;
    done.finish = chunk.choices?.[0]?.finish_reason ?? done.finish;
  }
  const message = assembler.message();
  return { id: done.id ?? '', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: done.model ?? '', system_fingerprint: null, choices: [{ index: 0, message, finish_reason: done.finish ?? null }], usage: done.usage! } as ChatCompletion;
}

/** The response to a prompt with a schema written in the call: `json` is the answer's value, typed by the schema. */
export type SchemaAnswer<S> = PromptResponse & { json: SchemaValue<S> };

/**
 * Sends `prompt` after `history` to `model` and runs the tool calls it asks for until it answers
 * in text. Throws the client's errors, `ToolCallsError` (calls it cannot run), `ToolSourceError`
 * (an MCP server failed), `SchemaMismatchError` (an answer that does not follow the schema).
 */
export async function runPrompt(client: RouterClient, model: string, history: ChatMessage[], prompt: string, opts: PromptOptions = {}): Promise<PromptResponse> {
  const { response, check } = await promptTurn(client, model, history, prompt, opts);
  return check(response);
}

/** The answer, and the schema's check of it (a conversation keeps the turn first, as the CLI does). */
export async function promptTurn(client: RouterClient, model: string, history: ChatMessage[], prompt: string, opts: PromptOptions) {
  checkOptions('prompt()', opts, PROMPT_OPTIONS);
  checkCounts('prompt()', opts, ['maxToolRounds'], 0);
  checkCounts('prompt()', opts, ['resultsBytes'], 1);
  checkTimeout('prompt()', opts, 'toolTimeoutMs');
  checkAttachments('prompt()', opts.attachments);
  // Else sent, and refused by the service (a 400: content must be a string or parts).
  if (typeof prompt !== 'string') throw new ValidationError(`prompt() takes its prompt as a string, not ${prompt === undefined ? 'nothing' : shownGiven(prompt)}`);
  if (opts.system !== undefined && typeof opts.system !== 'string') throw new ValidationError(`prompt() system must be a string, not ${shownGiven(opts.system)}`);
  // Else a single tool, not in [ ], was left out: the model answered without it.
  if (opts.tools !== undefined && !Array.isArray(opts.tools) && !(opts.tools instanceof ToolSet)) throw new ValidationError('prompt() tools must be an array of tools or a ToolSet: put a single tool in [ ]');
  const given: unknown = opts.schema;
  // From JavaScript a schema may come as JSON text, or as no object at all: answerSchema() says which (a SchemaError), not a TypeError.
  const compiled = typeof given === 'object' && given !== null && 'validate' in given && typeof given.validate === 'function';
  const schema = given === undefined ? undefined : compiled ? (given as AnswerSchema) : await answerSchema(given as Record<string, unknown>);
  const own = Array.isArray(opts.tools) && opts.tools.length ? await ToolSet.open({ tools: opts.tools, signal: opts.signal }) : undefined;
  const set = own ?? (opts.tools instanceof ToolSet ? opts.tools : undefined);
  try {
    const response = await ask(client, model, withSystem(history, opts.system), prompt, opts, schema, set);
    const check = (r: PromptResponse): PromptResponse => (schema ? { ...r, json: checkAnswer(schema, r.text) } : r);
    return { response, check };
  } finally {
    await own?.close();
  }
}

async function ask(client: RouterClient, model: string, sent: ChatMessage[], prompt: string, opts: PromptOptions, schema: AnswerSchema | undefined, set: ToolSet | undefined): Promise<PromptResponse> {
  // The answer's reading, loaded by the first prompt: a program that imports the kit and prompts nothing does not load it.
  const [{ readCompletion }, { messageOf }] = await Promise.all([import('../client/answer-reading.js'), import('../client/message-assembler.js')]);
  const attachments = opts.attachments ?? [];
  const start = sent.length;
  sent.push(userMessage(prompt, attachments));
  const signal = opts.signal ?? new AbortController().signal;
  const base: ChatCompletionRequest = { ...opts.request, model: opts.model ?? model, messages: sent };
  if (schema) base.response_format = chatResponseFormat(schema);
  if (set) base.tools = set.chatTools();
  let usage: ChatUsage | undefined;
  const toolCalls: PromptResponse['toolCalls'] = [];
  const budget = new ResultBudget(opts.resultsBytes ?? DEFAULT_RESULTS_BYTES);
  const request = async () => {
    const req = { ...base, messages: [...sent] };
    await opts.beforeRequest?.(req, usage?.cost ?? 0);
    const onText = opts.onText;
    const send = () => (onText ? streamed(client, req, signal, onText) : client.chat.create(req, { signal }));
    const completion = await guardedChat(opts.guard, req, opts.request?.max_completion_tokens !== undefined, 'kit', send, signal);
    usage = addUsage(usage, completion.usage);
    const { text, failure } = readCompletion(completion);
    if (failure) throw failure;
    return { completion, text, message: messageOf(completion.choices[0]?.message) };
  };
  const maxRounds = opts.maxToolRounds ?? 8;
  const run = async (calls: ToolCallRequest[], round: number): Promise<CallOutcome[]> => {
    const missing = calls.find((c) => !set?.tools.has(c.name));
    if (missing || round > maxRounds) {
      const declared = missing && set?.declared.some((d) => d.name === missing.name);
      const why = !missing ? `${counted(maxRounds, 'round')} of tool calls reached` : declared ? `${missing.name} is declared, not run here` : `there is no tool named ${missing.name}`;
      throw new ToolCallsError(!missing ? 'max_rounds' : declared ? 'declared' : 'missing', calls, why);
    }
    const outcomes: CallOutcome[] = [];
    for (const call of calls) {
      const outcome = await runToolCall(set!.tools, call, { signal, timeoutMs: opts.toolTimeoutMs ?? 300_000, timeoutName: 'toolTimeoutMs', budget, approve: opts.approve, secrets: credentialsInUse(), progress: opts.onToolProgress });
      toolCalls.push({ call, outcome });
      opts.onToolCall?.(call, outcome);
      outcomes.push(outcome);
    }
    return outcomes;
  };
  const images = async (outcomes: CallOutcome[]) => {
    const all = outcomes.flatMap((o) => o.images ?? []);
    if (all.length && !opts.toolImages) outcomes.at(-1)!.text += `\n[router: ${counted(all.length, 'image')} from the tools not passed on]`;
    return opts.toolImages ? all : [];
  };
  let answer;
  try {
    answer = await chatToolLoop(sent, await request(), request, { run, images });
  } finally {
    opts.guard?.release();
  }
  const turn = [recordedUserMessage(prompt, attachments), ...sent.slice(start + 1), { role: 'assistant' as const, content: answer.text }];
  return { text: answer.text, model: answer.completion.model || undefined, usage, toolCalls, messages: turn, completion: answer.completion };
}

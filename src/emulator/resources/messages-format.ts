/**
 * The Anthropic Messages format (`POST /v1/messages`, the OpenAPI's MessagesRequest and MessagesResult)
 * as chat: a messages body made a chat body, and a chat completion made a messages result. One
 * translation, used by the route (fake models and the gateway alike) and by `/v1/messages` batches.
 */
import { isRecord as isObject } from '../../internal/shape.js';
import { bad } from '../http/validate.js';
import { textOf } from '../models/content-text.js';
import { stopHitOf } from '../models/stop-sequences.js';

type Body = Record<string, unknown>;

/** The messages body's own fields that mean the same in a chat body (OpenRouter's routing fields among them). */
const SHARED = ['model', 'models', 'provider', 'stream', 'temperature', 'top_p', 'top_k', 'session_id', 'user', 'plugins', 'route', 'transforms', 'trace'];

/** A messages request as the chat request it means; throws HttpError(400) where it breaks the format's rules. */
export function chatBodyOf(body: Body): Body {
  if (!Array.isArray(body.messages) || body.messages.length === 0) bad('messages must be a non-empty array');
  // The OpenAPI's MessagesRequest requires model and messages only: a max_tokens left out is the model's own limit.
  const max = body.max_tokens;
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) bad('max_tokens must be an integer >= 1');
  const chat: Body = Object.fromEntries(SHARED.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]));
  if (typeof max === 'number') chat.max_tokens = max;
  const stops = body.stop_sequences;
  if (stops !== undefined && stops !== null) chat.stop = stopSequences(stops);
  const user = isObject(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof user === 'string' && chat.user === undefined) chat.user = user;
  const system = systemText(body.system);
  const uses = new Set<unknown>();
  // @anthropic-ai/sdk's message threads send only the new turn; the OpenAPI has no `thread`, the service keeps none.
  const lost = isObject(body.thread) && body.thread.type === 'continue' ? ' (this service keeps no message threads: send the whole conversation, as toolRunner({thread: false}) does)' : '';
  chat.messages = [...(system === undefined ? [] : [{ role: 'system', content: system }]), ...(body.messages as unknown[]).flatMap((m, i) => chatMessages(m, i, uses, lost))];
  if (body.tools !== undefined) chat.tools = chatTools(body.tools);
  const choice = chatToolChoice(body.tool_choice);
  if (choice !== undefined) chat.tool_choice = choice;
  if (isObject(body.tool_choice) && body.tool_choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  const reasoning = chatReasoning(body.thinking);
  if (reasoning) chat.reasoning = reasoning;
  const format = outputFormat(body.output_config);
  if (format) chat.response_format = format;
  return chat;
}

/** MessagesOutputConfig's `format` (structured outputs) as chat's json_schema response_format. */
function outputFormat(config: unknown): Body | undefined {
  if (config === undefined || config === null) return undefined;
  if (!isObject(config)) return bad('output_config must be an object');
  const { format } = config;
  if (format === undefined || format === null) return undefined;
  if (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema)) return bad('output_config.format must be {"type": "json_schema", "schema": {...}}');
  return { type: 'json_schema', json_schema: { name: 'output', strict: true, schema: format.schema } };
}

/** A request's stop_sequences as chat's stop, refused in its own name (chat runs at most 4, as its `stop`). */
function stopSequences(stops: unknown): string[] {
  if (!Array.isArray(stops) || stops.some((s) => typeof s !== 'string')) return bad('stop_sequences must be an array of strings');
  return stops.length > 4 ? bad('stop_sequences may hold at most 4 sequences') : (stops as string[]);
}

function systemText(system: unknown): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system;
  if (Array.isArray(system) && system.every((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')) return textOf(system);
  return bad('system must be a string or an array of text blocks');
}

/**
 * One messages-format message as chat messages: a user's tool results become `tool` messages before its other
 * blocks. `uses` holds the tool_use ids of the messages before: a tool_result answers one of them, as Anthropic's 400 holds.
 */
function chatMessages(message: unknown, i: number, uses: Set<unknown>, lost: string): Body[] {
  if (!isObject(message)) return bad(`messages[${i}] must be an object`);
  const { role, content } = message;
  if (role !== 'user' && role !== 'assistant') return bad(`messages[${i}].role must be user or assistant`);
  if (typeof content === 'string') return [{ role, content }];
  if (!Array.isArray(content)) return bad(`messages[${i}].content must be a string or an array of content blocks`);
  const blocks = content.map((b, j) => (isObject(b) && typeof b.type === 'string' ? b : bad(`messages[${i}].content[${j}] must be a content block with a type`)));
  if (role === 'assistant') {
    const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => (uses.add(b.id), { id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
    const text = textOf(blocks.filter((b) => b.type === 'text'));
    return [{ role, content: text || (calls.length ? null : ''), ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  blocks.forEach((b, j) => b.type === 'tool_result' && !uses.has(b.tool_use_id) && bad(`messages[${i}].content[${j}]: tool_result tool_use_id ${JSON.stringify(b.tool_use_id)} matches no tool_use block before it${lost}`));
  const results = blocks.filter((b) => b.type === 'tool_result').map((b) => ({ role: 'tool', tool_call_id: b.tool_use_id, content: typeof b.content === 'string' ? b.content : textOf(b.content) }));
  const parts = blocks.filter((b) => b.type !== 'tool_result').map((b, j) => chatPart(b, `messages[${i}].content[${j}]`));
  return [...results, ...(parts.length ? [{ role, content: parts }] : [])];
}

/** A user's text, image or document block as a chat content part. */
function chatPart(block: Body, where: string): Body {
  const source = isObject(block.source) ? block.source : undefined;
  const data = source?.type === 'base64' ? `data:${String(source.media_type)};base64,${String(source.data)}` : source?.type === 'url' ? String(source.url) : undefined;
  if (block.type === 'text') return { type: 'text', text: typeof block.text === 'string' ? block.text : bad(`${where}.text must be a string`) };
  if (block.type === 'image' && data) return { type: 'image_url', image_url: { url: data } };
  if (block.type === 'document' && source?.type === 'text') return { type: 'text', text: String(source.data ?? '') };
  if (block.type === 'document' && data) return { type: 'file', file: { filename: typeof block.title === 'string' ? block.title : 'document.pdf', file_data: data } };
  return bad(`${where}: a ${String(block.type)} block is not one router serve reads (text, image, document, tool_result)`);
}

function chatTools(tools: unknown): Body[] {
  if (!Array.isArray(tools)) return bad('tools must be an array');
  return tools.map((t: unknown, i) => {
    if (!isObject(t) || typeof t.name !== 'string') return bad(`tools[${i}] must be an object with a name`);
    // A server tool (web search, code execution…) has a type of its own: router serve runs none.
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') return bad(`tools[${i}]: ${String(t.type)} is a server tool router serve does not run`);
    return { type: 'function', function: { name: t.name, ...(typeof t.description === 'string' ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object', properties: {} } } };
  });
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === undefined || choice === null) return undefined;
  if (!isObject(choice)) return bad('tool_choice must be an object');
  if (choice.type === 'auto' || choice.type === 'none') return choice.type;
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  return bad('tool_choice.type must be auto, any, tool (with a name) or none');
}

function chatReasoning(thinking: unknown): Body | undefined {
  if (thinking === undefined || thinking === null) return undefined;
  if (!isObject(thinking)) return bad('thinking must be an object');
  if (thinking.type === 'enabled') return typeof thinking.budget_tokens === 'number' ? { max_tokens: thinking.budget_tokens } : { enabled: true };
  if (thinking.type === 'adaptive') return { enabled: true };
  if (thinking.type === 'disabled') return { enabled: false };
  return bad('thinking.type must be enabled, adaptive or disabled');
}

/** Who called a tool (AnthropicCaller): the model itself, as every chat tool call is. */
export const DIRECT = { type: 'direct' };

/** Chat's finish reason as a messages `stop_reason`. */
function stopReasonOf(finish: unknown): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls') return 'tool_use';
  if (finish === 'content_filter') return 'refusal';
  return 'end_turn';
}

/**
 * Why a chat answer's choice ended, in the messages format: `stop_sequence` and the one of `stops` (the
 * request's) that ended it, as a fake model kept it or an upstream says it (vLLM's `stop_reason`, SGLang's
 * `matched_stop`). An upstream that says only `finish_reason: "stop"` ended its turn as far as anyone knows.
 */
export function stopOf(choice: Body | undefined, stops: unknown): { stop_reason: string; stop_sequence: string | null } {
  const finish = choice?.finish_reason;
  if (finish !== 'stop') return { stop_reason: stopReasonOf(finish), stop_sequence: null };
  const asked = Array.isArray(stops) ? stops : [];
  const said = [choice?.stop_reason, choice?.matched_stop].find((s) => typeof s === 'string' && asked.includes(s)) as string | undefined;
  const hit = stopHitOf(stops) ?? said;
  return hit === undefined ? { stop_reason: 'end_turn', stop_sequence: null } : { stop_reason: 'stop_sequence', stop_sequence: hit };
}

/** Chat's usage as a messages result's (`tier`: AnthropicServiceTier, `batch` for a batch's). */
export function messagesUsage(usage: unknown, tier = 'standard'): Body {
  const u = isObject(usage) ? usage : {};
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const reasoning = isObject(u.completion_tokens_details) ? u.completion_tokens_details.reasoning_tokens : undefined;
  return {
    input_tokens: u.prompt_tokens ?? 0,
    output_tokens: u.completion_tokens ?? 0,
    output_tokens_details: typeof reasoning === 'number' ? { thinking_tokens: reasoning } : null,
    cache_creation_input_tokens: details.cache_write_tokens ?? 0,
    cache_read_input_tokens: details.cached_tokens ?? 0,
    cache_creation: null,
    inference_geo: null,
    server_tool_use: null,
    ...(u.cost !== undefined ? { cost: u.cost } : {}),
    service_tier: tier,
  };
}

/** A tool call's arguments as a tool_use block's `input` (an object; arguments that are no JSON object kept under `arguments`). */
export function toolInput(args: unknown): Body {
  try {
    const parsed: unknown = JSON.parse(typeof args === 'string' && args ? args : '{}');
    return isObject(parsed) ? parsed : { arguments: args };
  } catch {
    return { arguments: args };
  }
}

/** A chat completion as the messages result it means: thinking, text and tool_use blocks, why it stopped (`stops`: the request's), the usage. */
export function messageOf(completion: Body, tier = 'standard', stops?: unknown): Body {
  const choice = (Array.isArray(completion.choices) ? completion.choices[0] : undefined) as Body | undefined;
  const message = (isObject(choice?.message) ? choice.message : {}) as Body;
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Body[]) : [];
  const content: Body[] = [];
  if (typeof message.reasoning === 'string' && message.reasoning) content.push({ type: 'thinking', thinking: message.reasoning, signature: '' });
  const text = textOf(message.content);
  if (text || !calls.length) content.push({ type: 'text', text, citations: null });
  for (const call of calls) {
    const f = (isObject(call.function) ? call.function : {}) as Body;
    content.push({ type: 'tool_use', id: call.id, name: f.name, input: toolInput(f.arguments), caller: DIRECT });
  }
  return {
    id: completion.id,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    ...stopOf(choice, stops),
    stop_details: null,
    usage: messagesUsage(completion.usage, tier),
    container: null,
    input_transformations: [],
    // The routing metadata a caller opted in to (X-OpenRouter-Metadata), as chat's answer carried it.
    ...Object.fromEntries(['openrouter_metadata', 'router_metadata'].filter((k) => completion[k] !== undefined).map((k) => [k, completion[k]])),
  };
}

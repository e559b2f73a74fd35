/**
 * An MCP server's sampling request (`sampling/createMessage`) as a chat request to a model, and the
 * model's answer as the server takes it. `modelSampler` answers with one model through a client,
 * under a spend guard when given (each request checked before it is sent, its cost recorded).
 */
import type { RouterClient } from '../client/index.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from '../client/types.js';
import type { SpendGuard } from './spend/spend-guard.js';
import { guardedChat } from './spend/guarded-chat.js';
import type { McpClientAnswers, SamplingRequest, SamplingResult } from './mcp-client-requests.js';
import { checkOptions, optionNames } from '../client/option-names.js';

type Block = { type: string; text?: string; data?: string; mimeType?: string };

function part(b: Block): Record<string, unknown> {
  if (b.type === 'text') return { type: 'text', text: b.text ?? '' };
  if (b.type === 'image') return { type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } };
  if (b.type === 'audio') return { type: 'input_audio', input_audio: { data: b.data, format: /wav/.test(b.mimeType ?? '') ? 'wav' : 'mp3' } };
  return { type: 'text', text: `[${b.type} content]` };
}

/** The chat request a sampling request makes: its system prompt, messages, maxTokens, temperature and stop sequences. */
export function samplingChatRequest(params: SamplingRequest, model: string): ChatCompletionRequest {
  const messages: ChatMessage[] = params.systemPrompt ? [{ role: 'system', content: params.systemPrompt }] : [];
  for (const m of params.messages) {
    const blocks = (Array.isArray(m.content) ? m.content : [m.content]) as Block[];
    const text = blocks.every((b) => b.type === 'text') ? blocks.map((b) => b.text ?? '').join('\n') : undefined;
    messages.push({ role: m.role, content: text ?? (blocks.map(part) as ChatMessage['content']) } as ChatMessage);
  }
  return { model, messages, max_completion_tokens: params.maxTokens, ...(params.temperature === undefined ? {} : { temperature: params.temperature }), ...(params.stopSequences?.length ? { stop: params.stopSequences } : {}) };
}

/** The model's answer as a sampling result: its text, the model that answered, why it stopped. */
export function samplingResult(completion: ChatCompletion, model: string): SamplingResult {
  const choice = completion.choices[0];
  const content = choice?.message?.content;
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p as { text?: string }).text ?? '').join('') : '';
  const finish = choice?.finish_reason;
  return { role: 'assistant', content: { type: 'text', text }, model: completion.model || model, ...(finish ? { stopReason: finish === 'length' ? 'maxTokens' : finish === 'stop' ? 'endTurn' : finish } : {}) };
}

/** The names of SamplerOptions's members, checked against it both ways (a new option is a name here too). */
const SAMPLER_OPTIONS = optionNames<SamplerOptions>()({ guard: 1, command: 1 });

export interface SamplerOptions {
  /** Checks each sampling request before it is sent, and records what it cost (in the ledger as `command`). */
  guard?: SpendGuard | undefined;
  /** How the ledger names the work: `kit` if absent. */
  command?: string | undefined;
}

/** Answers servers' sampling requests with `model` through `client` (pass it as `sample` to `ToolSet.open` or `connectMcp`). */
export function modelSampler(client: RouterClient, model: string, opts: SamplerOptions = {}): NonNullable<McpClientAnswers['sample']> {
  checkOptions('modelSampler()', opts, SAMPLER_OPTIONS);
  return async (params, _server, signal) => {
    const req = samplingChatRequest(params, model);
    return samplingResult(await guardedChat(opts.guard, req, false, opts.command ?? 'kit', () => client.chat.create(req, { signal }), signal), model);
  };
}

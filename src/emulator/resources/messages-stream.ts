/**
 * A chat completion stream as Anthropic's Messages event stream: message_start, one
 * content_block_start/delta/stop run per thinking, text or tool_use block, message_delta (stop reason
 * and usage), message_stop. A chat error chunk becomes an `error` event; keep-alive comments pass.
 */
import { DIRECT, messagesUsage, stopOf } from './messages-format.js';
import { messagesErrorFromChat } from './messages-errors.js';

type Body = Record<string, unknown>;
type Block = { kind: 'thinking' | 'text' | 'tool'; index: number; call?: unknown };

/** What the stream's request says of its answer: its stop sequences, and its input's tokens (known before the answer is). */
export interface MessagesAsk {
  stops?: unknown;
  inputTokens?: () => number;
}

const frame = (type: string, data: Body): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export class MessagesStream {
  private pending = '';
  private started = false;
  private finished = false;
  private open: Block | undefined;
  private blocks = 0;
  private stop: ReturnType<typeof stopOf> | undefined;
  private usage: unknown;

  constructor(private readonly ask: MessagesAsk = {}) {}

  /** The Anthropic events for the chat stream's bytes written so far (a frame split across writes waits for its end). */
  push(text: string): string {
    this.pending += text;
    const end = this.pending.lastIndexOf('\n\n');
    if (end < 0) return '';
    const whole = this.pending.slice(0, end + 2);
    this.pending = this.pending.slice(end + 2);
    let out = '';
    for (const raw of whole.split('\n\n')) {
      if (!raw) continue;
      if (raw.startsWith(':')) out += `${raw}\n\n`;
      const data = raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (data && data !== '[DONE]') out += this.chunk(data);
    }
    return out;
  }

  /** What is owed at the stream's end: the final events when the finish came without a usage chunk. */
  end(): string {
    return this.stop !== undefined && !this.finished ? this.final() : '';
  }

  private chunk(data: string): string {
    let chunk: Body;
    try {
      chunk = JSON.parse(data) as Body;
    } catch {
      return '';
    }
    if (this.finished) return '';
    let out = '';
    if (!this.started) {
      this.started = true;
      // The input's count at the start, as Anthropic's; the output's and the final counts come in message_delta.
      const usage = messagesUsage({ prompt_tokens: this.ask.inputTokens?.() ?? 0 });
      const message = { id: chunk.id, type: 'message', role: 'assistant', model: chunk.model, content: [], stop_reason: null, stop_sequence: null, stop_details: null, usage, container: null };
      out += frame('message_start', { message });
    }
    const error = chunk.error as Body | undefined;
    if (error && typeof error === 'object') {
      this.finished = true;
      return out + this.close() + frame('error', { error: messagesErrorFromChat(error) });
    }
    const choice = (Array.isArray(chunk.choices) ? chunk.choices[0] : undefined) as Body | undefined;
    const delta = (choice?.delta ?? {}) as Body;
    if (typeof delta.reasoning === 'string' && delta.reasoning) out += this.into('thinking') + this.delta({ type: 'thinking_delta', thinking: delta.reasoning });
    if (typeof delta.content === 'string' && delta.content) out += this.into('text') + this.delta({ type: 'text_delta', text: delta.content });
    for (const call of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Body[]) : []) out += this.toolDelta(call);
    if (choice?.finish_reason) {
      out += this.close();
      this.stop = stopOf(choice, this.ask.stops);
    }
    if (chunk.usage) this.usage = chunk.usage;
    if (this.stop !== undefined && this.usage) out += this.final();
    return out;
  }

  private toolDelta(call: Body): string {
    const f = (call.function ?? {}) as Body;
    let out = '';
    if (this.open?.kind !== 'tool' || (call.index !== undefined && call.index !== this.open.call) || (typeof call.id === 'string' && call.id)) {
      out += this.close();
      this.open = { kind: 'tool', index: this.blocks++, call: call.index };
      out += frame('content_block_start', { index: this.open.index, content_block: { type: 'tool_use', id: call.id, name: f.name, input: {}, caller: DIRECT } });
    }
    if (typeof f.arguments === 'string' && f.arguments) out += this.delta({ type: 'input_json_delta', partial_json: f.arguments });
    return out;
  }

  /** Opens a block of `kind` unless one is open (closing the one before). */
  private into(kind: 'thinking' | 'text'): string {
    if (this.open?.kind === kind) return '';
    const out = this.close();
    this.open = { kind, index: this.blocks++ };
    const block = kind === 'text' ? { type: 'text', text: '', citations: null } : { type: 'thinking', thinking: '', signature: '' };
    return out + frame('content_block_start', { index: this.open.index, content_block: block });
  }

  private delta(delta: Body): string {
    return frame('content_block_delta', { index: this.open!.index, delta });
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = undefined;
    return frame('content_block_stop', { index });
  }

  private final(): string {
    this.finished = true;
    const { service_tier: _tier, inference_geo: _geo, ...usage } = messagesUsage(this.usage);
    const delta = { ...this.stop, stop_details: null, container: null };
    return this.close() + frame('message_delta', { delta, usage }) + frame('message_stop', {});
  }
}

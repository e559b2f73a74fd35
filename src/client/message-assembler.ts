/** A chat answer's message, assembled from its stream: text, reasoning, tool calls (by index), images, annotations. */
import type { ChatChunk, JSONObject } from './types.js';
import { contentText } from './answer-reading.js';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The assistant message as the non-streamed answer gives it (the fields a stream carried, no others). */
export interface AssembledMessage {
  role: 'assistant';
  content: string | null;
  reasoning?: string | undefined;
  reasoning_details?: JSONObject[] | undefined;
  tool_calls?: (ToolCall & { index: number })[] | undefined;
  images?: { type: 'image_url'; image_url: { url: string } }[] | undefined;
  annotations?: JSONObject[] | undefined;
}

/**
 * Joins the deltas of a chat stream into the message: text and reasoning appended, reasoning
 * details by their `index` (text fields appended), tool calls by their `index` (id, type and name
 * from the fragment that has them, arguments appended in order), images and annotations collected.
 */
export class MessageAssembler {
  private content: string | null = null;
  private reasoning: string | undefined;
  private readonly details = new Map<number, JSONObject>();
  private readonly calls = new Map<number, ToolCall & { index: number }>();
  private readonly images: NonNullable<AssembledMessage['images']> = [];
  private readonly annotations: JSONObject[] = [];

  /** Adds one chunk; returns the reasoning text it brought ('' for none). */
  add(chunk: ChatChunk): string {
    const delta = chunk.choices?.[0]?.delta as JSONObject | undefined;
    if (!delta) return '';
    if (typeof delta.content === 'string' && delta.content) this.content = (this.content ?? '') + delta.content;
    const reasoning = typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (reasoning) this.reasoning = (this.reasoning ?? '') + reasoning;
    if (Array.isArray(delta.reasoning_details)) this.addDetails(delta.reasoning_details as JSONObject[]);
    if (Array.isArray(delta.tool_calls)) this.addCalls(delta.tool_calls as JSONObject[]);
    if (Array.isArray(delta.images)) this.images.push(...(delta.images as AssembledMessage['images'] & object));
    if (Array.isArray(delta.annotations)) this.annotations.push(...(delta.annotations as JSONObject[]));
    return reasoning;
  }

  private addDetails(details: JSONObject[]): void {
    for (const d of details) {
      const at = typeof d?.index === 'number' ? d.index : this.details.size;
      const known = this.details.get(at);
      if (!known) this.details.set(at, { ...d });
      else for (const key of ['summary', 'text', 'data'] as const) if (typeof d[key] === 'string') known[key] = String(known[key] ?? '') + d[key];
    }
  }

  private addCalls(calls: JSONObject[]): void {
    for (const c of calls) {
      const index = typeof c.index === 'number' ? c.index : this.calls.size;
      const fn = (c.function ?? {}) as JSONObject;
      const call = this.calls.get(index) ?? { index, id: '', type: 'function' as const, function: { name: '', arguments: '' } };
      if (typeof c.id === 'string' && c.id) call.id = c.id;
      if (typeof fn.name === 'string' && fn.name) call.function.name = fn.name;
      if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
      this.calls.set(index, call);
    }
  }

  message(): AssembledMessage {
    // A message of tool calls alone has no content (null), as the non-streamed answer gives it; a text answer has a string, if empty.
    const m: AssembledMessage = { role: 'assistant', content: this.content ?? (this.calls.size ? null : '') };
    if (this.reasoning !== undefined) m.reasoning = this.reasoning;
    if (this.details.size) m.reasoning_details = [...this.details.entries()].sort(([a], [b]) => a - b).map(([, d]) => d);
    if (this.calls.size) m.tool_calls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
    if (this.images.length) m.images = this.images;
    if (this.annotations.length) m.annotations = this.annotations;
    return m;
  }
}

/** The fields of a non-streamed answer's message that the CLI reads. */
export function messageOf(raw: JSONObject | undefined): AssembledMessage {
  const m = raw ?? {};
  const out: AssembledMessage = { role: 'assistant', content: typeof m.content === 'string' || Array.isArray(m.content) ? contentText(m.content) : null };
  if (typeof m.reasoning === 'string') out.reasoning = m.reasoning;
  if (Array.isArray(m.reasoning_details)) out.reasoning_details = m.reasoning_details as JSONObject[];
  if (Array.isArray(m.tool_calls)) out.tool_calls = m.tool_calls as AssembledMessage['tool_calls'];
  if (Array.isArray(m.images)) out.images = m.images as AssembledMessage['images'];
  if (Array.isArray(m.annotations)) out.annotations = m.annotations as JSONObject[];
  return out;
}

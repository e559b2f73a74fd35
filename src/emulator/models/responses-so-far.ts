/**
 * A Responses stream's output as its events so far built it: what a `response.failed` ending the stream says was
 * sent before it (the fake models' and the gateway's alike), so a caller reading the final response alone gets the
 * text it was streamed.
 */
type Body = Record<string, unknown>;

const isBody = (v: unknown): v is Body => !!v && typeof v === 'object' && !Array.isArray(v);
const copy = (v: unknown): Body => (isBody(v) ? (structuredClone(v) as Body) : {});

export class ResponseSoFar {
  private readonly items: Body[] = [];
  private readonly done = new Set<number>();

  /** Takes one event as the caller got it. */
  add(event: Body): void {
    const at = event.output_index;
    if (typeof at !== 'number') return;
    const type = event.type;
    if (type === 'response.output_item.added' || type === 'response.output_item.done') {
      this.items[at] = copy(event.item);
      if (type === 'response.output_item.done') this.done.add(at);
      return;
    }
    // Text of an item its stream never opened (some servers send the deltas alone): the message it is part of.
    if (!this.items[at] && type === 'response.output_text.delta') this.items[at] = { type: 'message', id: event.item_id, role: 'assistant', status: 'in_progress', content: [] };
    const item = this.items[at];
    if (!item) return;
    if (type === 'response.function_call_arguments.delta') item.arguments = `${typeof item.arguments === 'string' ? item.arguments : ''}${String(event.delta ?? '')}`;
    else if (type === 'response.function_call_arguments.done' && typeof event.arguments === 'string') item.arguments = event.arguments;
    else if (type === 'response.content_part.added' || type === 'response.content_part.done') this.list(item, 'content')[Number(event.content_index)] = copy(event.part);
    else if (type === 'response.reasoning_summary_part.added' || type === 'response.reasoning_summary_part.done') this.list(item, 'summary')[Number(event.summary_index)] = copy(event.part);
    else if (type === 'response.output_text.delta') this.append(item, 'content', event.content_index, 'text', event.delta);
    else if (type === 'response.refusal.delta') this.append(item, 'content', event.content_index, 'refusal', event.delta);
    else if (type === 'response.reasoning_text.delta') this.append(item, 'content', event.content_index, 'text', event.delta);
    else if (type === 'response.reasoning_summary_text.delta') this.append(item, 'summary', event.summary_index, 'text', event.delta);
  }

  /** The items sent, each not finished marked `incomplete` (the status the OpenAPI's output items have for it). */
  output(): Body[] {
    return this.items.flatMap((item, i) => (!item ? [] : this.done.has(i) ? [item] : [{ ...item, status: 'incomplete' }]));
  }

  /** The text of the messages sent, as a response's `output_text` joins it. */
  text(): string {
    return this.items
      .filter((item) => item?.type === 'message' && Array.isArray(item.content))
      .flatMap((item) => (item.content as unknown[]).filter((p): p is Body => isBody(p) && p.type === 'output_text' && typeof p.text === 'string'))
      .map((p) => p.text as string)
      .join('');
  }

  private list(item: Body, member: 'content' | 'summary'): unknown[] {
    if (!Array.isArray(item[member])) item[member] = [];
    return item[member] as unknown[];
  }

  /** A delta added to `member` of the part at `index` (a part its `.added` event did not open is opened). */
  private append(item: Body, member: 'content' | 'summary', index: unknown, key: string, delta: unknown): void {
    if (typeof delta !== 'string' || typeof index !== 'number') return;
    const parts = this.list(item, member);
    const part = isBody(parts[index]) ? (parts[index] as Body) : (parts[index] = { type: member === 'summary' ? 'summary_text' : item.type === 'reasoning' ? 'reasoning_text' : key === 'refusal' ? 'refusal' : 'output_text', [key]: '', ...(key === 'text' && item.type === 'message' && { annotations: [] }) });
    part[key] = `${typeof part[key] === 'string' ? part[key] : ''}${delta}`;
  }
}

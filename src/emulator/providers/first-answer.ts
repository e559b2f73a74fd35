type Body = Record<string, unknown>;

/** Responses events that open a stream before any output: its response, an empty message or part. */
const OPENING = new Set(['response.created', 'response.in_progress', 'response.content_part.added']);

const some = (v: unknown) => (typeof v === 'string' ? v !== '' : Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null);

/**
 * Whether a stream event carries something of an answer, for `first_event_timeout_ms`: content,
 * reasoning, a refusal, a tool call, an image, a finish reason, usage or an error; a Responses event
 * past the stream's opening. A role-only first chunk (`{"delta":{"role":"assistant"}}`, or OpenAI's
 * with `"content":""`, with or without a `type` member of its own), a chunk with no choices and no
 * usage (a `{"type":"ping"}`), `response.created`: not yet. An event
 * that is not a JSON object counts (the relay then judges it). `responses`: the stream is a Responses
 * one (its events judged by their `type`); else a chat stream (its chunks by their choices, whatever
 * `type` they carry). `parsed`: told what the event parsed to (the relay takes it: parsed once).
 */
export function carriesAnswer(data: string, responses = false, parsed?: (event: unknown) => void): boolean {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return true;
  }
  parsed?.(event);
  if (!event || typeof event !== 'object' || Array.isArray(event)) return true;
  return answers(event as Body, responses);
}

/** carriesAnswer() of an event already parsed: the relay holds a stream until one such (so the timer is let go by then). */
export function answers(e: Body, responses = false): boolean {
  if (some(e.error) || (e.usage && typeof e.usage === 'object')) return true;
  // Which API the stream speaks decides, not the event's look: a chat chunk's `type` (some servers add one) says nothing.
  if (responses) {
    if (typeof e.type !== 'string' || (e.type !== 'error' && !e.type.startsWith('response.'))) return false;
    const item = e.item as Body | undefined;
    return !OPENING.has(e.type) && !(e.type === 'response.output_item.added' && (item?.type === 'message' || item?.type === 'reasoning'));
  }
  if (!Array.isArray(e.choices)) return false;
  return (e.choices as Body[]).some((choice) => {
    if (!choice || typeof choice !== 'object') return false;
    if (some(choice.finish_reason)) return true;
    const delta = (choice.delta ?? choice.message) as Body | undefined;
    if (!delta || typeof delta !== 'object') return false;
    return some(delta.content) || some(delta.reasoning) || some(delta.reasoning_content) || some(delta.reasoning_details) || some(delta.refusal) || some(delta.tool_calls) || some(delta.function_call) || some(delta.images) || some(delta.audio);
  });
}

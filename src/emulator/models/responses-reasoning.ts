import { randomHex } from '../http/ids.js';
import { pieces } from './models.js';

type Body = Record<string, unknown>;

/** A Responses reasoning output item: its summary text (what `local/thinker` reasons). */
export function reasoningItem(text: string): Body {
  return { type: 'reasoning', id: `rs_${randomHex(12)}`, status: 'completed', summary: [{ type: 'summary_text', text }] };
}

/** A Responses image generation item: the PNG `local/painter` drew, base64 in `result`. */
export function imageItem(dataUrl: string, prompt: string): Body {
  return { type: 'image_generation_call', id: `ig_${randomHex(12)}`, status: 'completed', result: dataUrl.slice(dataUrl.indexOf(',') + 1), prompt };
}

/**
 * The stream events of an item before the message: added and done; between them a reasoning item's
 * summary part, added empty, its text in deltas, then done (the openai package's stream helper
 * fills the part the deltas name, so a part never added fails it).
 */
export function leadingItemEvents(item: Body, outputIndex: number): Body[] {
  if (item.type !== 'reasoning') {
    return [
      { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', result: null } },
      { type: 'response.output_item.done', output_index: outputIndex, item },
    ];
  }
  const text = ((item.summary as Body[])[0]!.text as string) ?? '';
  const at = { item_id: item.id, output_index: outputIndex, summary_index: 0 };
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', summary: [] } },
    { type: 'response.reasoning_summary_part.added', ...at, part: { type: 'summary_text', text: '' } },
    ...pieces(text).map((delta) => ({ type: 'response.reasoning_summary_text.delta', ...at, delta })),
    { type: 'response.reasoning_summary_text.done', ...at, text },
    { type: 'response.reasoning_summary_part.done', ...at, part: { type: 'summary_text', text } },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ];
}

/**
 * What a Responses answer reasoned, as generation content keeps a chat answer's `reasoning`: its
 * reasoning items' text (`reasoning_text` content, else the `summary_text` summary), null when none.
 */
export function reasoningOf(response: Body): string | null {
  const items = (Array.isArray(response.output) ? response.output : []) as Body[];
  const texts: string[] = [];
  for (const item of items) {
    if (item?.type !== 'reasoning') continue;
    const parts = (Array.isArray(item.content) && item.content.length ? item.content : Array.isArray(item.summary) ? item.summary : []) as Body[];
    for (const part of parts) if (typeof part?.text === 'string' && part.text) texts.push(part.text);
  }
  return texts.length ? texts.join('\n') : null;
}

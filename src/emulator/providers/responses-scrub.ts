import type { TextScrub } from './text-scrub.js';

type Body = Record<string, unknown>;

/**
 * A parsed Responses event through `scrub`: a `.delta` event's text as its stream's next (by type, item
 * and content part), its item's id as a field (TextScrub.field); before any other event, what is held
 * goes out as the delta events it was taken from (returned, to send first). Audio's base64 deltas are no
 * text and pass as they are.
 */
export function scrubResponsesEvent(scrub: TextScrub, event: Body): Body[] | undefined {
  const type = event.type;
  if (typeof type === 'string' && type.endsWith('.delta') && type !== 'response.audio.delta' && typeof event.delta === 'string') {
    if (typeof event.item_id === 'string') event.item_id = scrub.field(event.item_id);
    const name = `${type}|${String(event.item_id)}|${String(event.output_index)}|${String(event.content_index ?? event.summary_index ?? '')}`;
    if (scrub.needs(name, event.delta)) event.delta = scrub.piece(name, event.delta, { ...event, delta: '' });
    return undefined;
  }
  // Any other event's strings (a `.done` text, the final response's output, ids) searched decoded: a key escaped in them too.
  scrub.maskIn(event);
  if (!scrub.holding) return undefined;
  return scrub.release().map(({ text, shape }) => ({ ...shape, delta: text }));
}

import { renamed, type TextScrub } from './text-scrub.js';

type Body = Record<string, unknown>;

/**
 * A parsed Responses event through `scrub`: a `.delta` event's text as its stream's next (by type, item
 * and content part), every other string an upstream gave in it (its `item_id`, its `obfuscation`, a
 * logprob's token, a member not yet named) a field (TextScrub.field), in the order they are written;
 * before any other event, what is held goes out as the delta events it was taken from (returned, to send
 * first), and that event's strings are fields too (a `.done` text, the final response's). Audio's base64
 * deltas are no text: a field each.
 */
export function scrubResponsesEvent(scrub: TextScrub, event: Body): Body[] | undefined {
  const type = event.type;
  if (typeof type === 'string' && type.endsWith('.delta') && type !== 'response.audio.delta' && typeof event.delta === 'string') {
    const name = `${type}|${String(event.item_id)}|${String(event.output_index)}|${String(event.content_index ?? event.summary_index ?? '')}`;
    // The event a held text goes out in: this one as it goes out (filled once all of its strings went through).
    let shape: Body | undefined;
    let names: Map<string, string> | undefined;
    for (const k in event) {
      names = scrub.named(k, names);
      if (k !== 'delta') scrub.fieldOf(event, k);
      else if (scrub.needs(name, event.delta as string)) event.delta = scrub.piece(name, event.delta as string, (shape = {}));
    }
    if (names) renamed(event, names);
    if (shape) Object.assign(shape, event, { delta: '' });
    return undefined;
  }
  let names: Map<string, string> | undefined;
  for (const k in event) {
    names = scrub.named(k, names);
    scrub.fieldOf(event, k);
  }
  if (names) renamed(event, names);
  if (!scrub.holding) return undefined;
  return scrub.release().map(({ text, shape }) => ({ ...shape, delta: text }));
}

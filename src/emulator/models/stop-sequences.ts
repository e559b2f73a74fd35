/**
 * A chat request's stop sequences on a fake model: where one cuts the answer, and which one did. Chat's
 * answer says only `finish_reason: "stop"`; the messages format says the sequence (`stop_sequence`), so
 * the one that cut an answer is kept by the stop list it was asked with: each request's own array, the
 * same one the messages route holds and a gateway hands its fake models in the body it copies.
 */
const hits = new WeakMap<object, string>();

/** `text` up to the stop sequence that a model writing it piece by piece completes first, and that sequence. */
export function cutAtStop(text: string, stops: readonly string[]): { text: string; hit?: string } {
  let hit: string | undefined;
  let at = -1;
  let end = Infinity;
  for (const s of stops) {
    const found = s ? text.indexOf(s) : -1;
    if (found === -1 || found + s.length > end || (found + s.length === end && found >= at)) continue;
    [hit, at, end] = [s, found, found + s.length];
  }
  return hit === undefined ? { text } : { text: text.slice(0, at), hit };
}

/** Keeps which of `stops` ended the answer just made for them (none: undefined). */
export function keepStopHit(stops: unknown, hit: string | undefined): void {
  if (!Array.isArray(stops)) return;
  if (hit === undefined) hits.delete(stops);
  else hits.set(stops, hit);
}

/** The stop sequence of `stops` that ended a fake model's answer to them, if one did. */
export const stopHitOf = (stops: unknown): string | undefined => (Array.isArray(stops) ? hits.get(stops) : undefined);

import { isRecord as isObject } from '../../internal/shape.js';
import type { TextScrub } from './text-scrub.js';

type Body = Record<string, unknown>;

/** The text members of a chat delta that are streams of their own, per choice. */
const DELTA_TEXTS = ['content', 'reasoning', 'reasoning_content', 'refusal'] as const;

/** The text members of a `reasoning_details` item (by its `index`), each a stream of its own. */
const DETAIL_TEXTS = ['text', 'summary', 'data'] as const;

/** A chunk's strings that are no stream's text (TextScrub.field), and a tool call's. */
const CHUNK_FIELDS = ['id', 'system_fingerprint'] as const;

/**
 * A parsed chat chunk's texts through `scrub` (each choice's delta texts, its tool calls' names and
 * arguments, its reasoning_details' texts: each a stream; its id, fingerprint and tool calls' ids: fields);
 * a choice that finishes in it gets what was held for it. True when the chunk was changed.
 */
export function scrubChatChunk(scrub: TextScrub, chunk: Body): boolean {
  let changed = false;
  const field = (owner: Body, name: string) => {
    const text = owner[name];
    if (typeof text !== 'string') return;
    const out = scrub.field(text);
    if (out !== text) [owner[name], changed] = [out, true];
  };
  for (const name of CHUNK_FIELDS) field(chunk, name);
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return changed;
  const through = (owner: Body | undefined, field: string, name: string, shape?: Body) => {
    const text = owner?.[field];
    if (typeof text !== 'string' || !scrub.needs(name, text)) return;
    owner![field] = scrub.piece(name, text, shape);
    changed = true;
  };
  for (const choice of choices) {
    if (!isObject(choice)) continue;
    const i = String(choice.index ?? 0);
    const delta = isObject(choice.delta) ? choice.delta : undefined;
    for (const field of DELTA_TEXTS) through(delta, field, `${i}.${field}`);
    if (Array.isArray(delta?.tool_calls)) {
      for (const call of delta.tool_calls as unknown[]) {
        const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
        const at = String((call as Body)?.index ?? 0);
        if (isObject(call)) field(call, 'id');
        through(fn, 'name', `${i}.name.${at}`);
        through(fn, 'arguments', `${i}.tool.${at}`);
      }
    }
    if (Array.isArray(delta?.reasoning_details)) {
      for (const [n, item] of (delta.reasoning_details as unknown[]).entries()) {
        if (!isObject(item)) continue;
        const at = String(item.index ?? n);
        for (const field of DETAIL_TEXTS) through(item, field, `${i}.detail.${at}.${field}`, { type: item.type, index: item.index ?? n });
      }
    }
    if (choice.finish_reason != null && scrub.holding) {
      const held = scrub.release(`${i}.`);
      if (held.length) {
        choice.delta = merged(delta ?? {}, heldDelta(held));
        changed = true;
      }
    }
  }
  return changed;
}

/** What is still held at a chat stream's end, as one chunk's choices (undefined when nothing is). */
export function heldChoices(scrub: TextScrub): Body[] | undefined {
  if (!scrub.holding) return undefined;
  const byChoice = new Map<string, { name: string; text: string; shape?: Body }[]>();
  for (const held of scrub.release()) {
    const i = held.name.slice(0, held.name.indexOf('.'));
    byChoice.set(i, [...(byChoice.get(i) ?? []), held]);
  }
  return [...byChoice].map(([i, held]) => ({ index: Number(i), delta: heldDelta(held), finish_reason: null }));
}

/** `delta` with the held texts after its own: a text member's appended, a tool call's or a reasoning detail's added. */
function merged(delta: Body, held: Body): Body {
  const out: Body = { ...delta };
  for (const [k, v] of Object.entries(held)) {
    if (Array.isArray(v)) out[k] = [...(Array.isArray(out[k]) ? (out[k] as unknown[]) : []), ...v];
    else out[k] = typeof out[k] === 'string' ? `${out[k] as string}${v as string}` : v;
  }
  return out;
}

/** Held texts of one choice as the delta that carries them (a tool call's name or arguments under its index, a reasoning detail's text under its). */
function heldDelta(held: { name: string; text: string; shape?: Body }[]): Body {
  const delta: Body = {};
  for (const { name, text, shape } of held) {
    const [, field, index, member] = name.split('.');
    if (field === 'tool') ((delta.tool_calls ??= []) as Body[]).push({ index: Number(index), function: { arguments: text } });
    else if (field === 'name') ((delta.tool_calls ??= []) as Body[]).push({ index: Number(index), function: { name: text } });
    else if (field === 'detail') ((delta.reasoning_details ??= []) as Body[]).push({ ...shape, [member!]: text });
    else delta[field!] = text;
  }
  return delta;
}

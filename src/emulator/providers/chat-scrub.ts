import { isRecord as isObject } from '../../internal/shape.js';
import { renamed, type TextScrub } from './text-scrub.js';

type Body = Record<string, unknown>;

/** The text members of a chat delta that are streams of their own, per choice. */
const DELTA_TEXTS = ['content', 'reasoning', 'reasoning_content', 'refusal'] as const;

/** The text members of a `reasoning_details` item (by its `index`), each a stream of its own. */
const DETAIL_TEXTS = ['text', 'summary', 'data'] as const;

/**
 * A parsed chat chunk's strings through `scrub`, in the order they are written (the caller's bytes' order): each
 * choice's delta texts, its tool calls' names and arguments, its reasoning_details' texts each a stream; every
 * other string an upstream gave (an id, a fingerprint, a tool call's id, an `obfuscation`, an annotation, a member
 * not yet named) a field (TextScrub.field). A choice that finishes in it gets what was held for it. True when the
 * chunk was changed.
 */
export function scrubChatChunk(scrub: TextScrub, chunk: Body): boolean {
  let changed = false;
  const through = (owner: Body, field: string, name: string, shape?: Body) => {
    const text = owner[field];
    if (typeof text !== 'string') return void (changed = scrub.fieldOf(owner, field) || changed);
    if (!scrub.needs(name, text)) return;
    owner[field] = scrub.piece(name, text, shape);
    changed = true;
  };
  let names: Map<string, string> | undefined;
  for (const k in chunk) {
    names = scrub.named(k, names);
    const choices = chunk[k];
    if (k !== 'choices' || !Array.isArray(choices)) {
      changed = scrub.fieldOf(chunk, k) || changed;
      continue;
    }
    for (let c = 0; c < choices.length; c++) {
      const choice: unknown = choices[c];
      if (!isObject(choice)) {
        changed = scrub.fieldOf(choices, c) || changed;
        continue;
      }
      const i = String(choice.index ?? 0);
      let renames: Map<string, string> | undefined;
      for (const m in choice) {
        renames = scrub.named(m, renames);
        const delta = choice[m];
        if (m === 'delta' && isObject(delta)) changed = deltaThrough(scrub, delta, i, through) || changed;
        else changed = scrub.fieldOf(choice, m) || changed;
      }
      if (renames) changed = renamed(choice, renames);
      if (choice.finish_reason != null && scrub.holding) {
        const held = scrub.release(`${i}.`);
        if (held.length) {
          choice.delta = merged(isObject(choice.delta) ? choice.delta : {}, heldDelta(held));
          changed = true;
        }
      }
    }
  }
  return names ? renamed(chunk, names) : changed;
}

type Through = (owner: Body, field: string, name: string, shape?: Body) => void;

/** A choice's delta (choice `i`) through the scrub: its texts each a stream (`through`), its other strings fields. */
function deltaThrough(scrub: TextScrub, delta: Body, i: string, through: Through): boolean {
  let changed = false;
  let names: Map<string, string> | undefined;
  for (const k in delta) {
    names = scrub.named(k, names);
    const value = delta[k];
    if ((DELTA_TEXTS as readonly string[]).includes(k)) through(delta, k, `${i}.${k}`);
    else if (k === 'tool_calls' && Array.isArray(value)) {
      for (const [n, call] of (value as unknown[]).entries()) {
        if (!isObject(call)) {
          changed = scrub.fieldOf(value as unknown[], n) || changed;
          continue;
        }
        const at = String(call.index ?? 0);
        let renames: Map<string, string> | undefined;
        for (const m in call) {
          renames = scrub.named(m, renames);
          const fn = call[m];
          if (m !== 'function' || !isObject(fn)) changed = scrub.fieldOf(call, m) || changed;
          else {
            let fnNames: Map<string, string> | undefined;
            for (const f in fn) {
              fnNames = scrub.named(f, fnNames);
              if (f === 'name' || f === 'arguments') through(fn, f, `${i}.${f === 'name' ? 'name' : 'tool'}.${at}`);
              else changed = scrub.fieldOf(fn, f) || changed;
            }
            if (fnNames) changed = renamed(fn, fnNames);
          }
        }
        if (renames) changed = renamed(call, renames);
      }
    } else if (k === 'reasoning_details' && Array.isArray(value)) {
      for (const [n, item] of (value as unknown[]).entries()) {
        if (!isObject(item)) {
          changed = scrub.fieldOf(value as unknown[], n) || changed;
          continue;
        }
        const at = String(item.index ?? n);
        const shape = { type: item.type, index: item.index ?? n };
        let renames: Map<string, string> | undefined;
        for (const m in item) {
          renames = scrub.named(m, renames);
          if ((DETAIL_TEXTS as readonly string[]).includes(m)) through(item, m, `${i}.detail.${at}.${m}`, shape);
          else changed = scrub.fieldOf(item, m) || changed;
        }
        if (renames) changed = renamed(item, renames);
      }
    } else changed = scrub.fieldOf(delta, k) || changed;
  }
  return names ? renamed(delta, names) : changed;
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

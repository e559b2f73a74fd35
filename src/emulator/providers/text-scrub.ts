import { KEY_MASK } from './key-scrub.js';

export { hiddenKey, keyTexts } from './key-scrub.js';

type Body = Record<string, unknown>;

const TABLES = new WeakMap<readonly string[], { inKeys: Uint8Array; wide: boolean }>();

function tableOf(forms: readonly string[]): { inKeys: Uint8Array; wide: boolean } {
  const inKeys = new Uint8Array(128);
  let wide = false;
  for (const form of forms) {
    for (let i = 0; i < form.length; i++) {
      if (form.charCodeAt(i) < 128) inKeys[form.charCodeAt(i)] = 1;
      else wide = true;
    }
  }
  return { inKeys, wide };
}

/**
 * Provider keys hidden across a stream's events: KeyScrub's rule applied to the text each event adds to
 * a stream of text of its own (a chat choice's content, reasoning, refusal, a tool call's arguments; a
 * Responses delta stream), decoded. An upstream that sends `"content":"sk-abc"` then `"content":"def…"`
 * has no key in any one event's bytes (KeyScrub sees none): here the text that ends with the start of a
 * key (any form of it, keyForms) is held back and put before that stream's next text, where a whole key
 * is masked; what is still held when the stream's choice finishes (or the stream ends) goes out then.
 *
 * Cost, per event's text: a search of it for each form (`includes`, O(text), as KeyScrub's of each read),
 * a table look-up of its last character and, only when a key holds that character, a search of its last
 * characters for each form's start: no copy, no delay. Only a text that ends with a key's start is
 * copied and held, no longer than until its stream's next event; the chunk it came in is then parsed and
 * framed anew (a plain chunk is otherwise framed from its bytes). No scrub at all when no key is configured.
 */
export class TextScrub {
  /** The text held back per stream, and the event (without its text) it was taken from (Responses: sent again with it). */
  private held: Map<string, { text: string; shape?: Body }> | undefined;
  /** Each ASCII character some form holds, by code (made once for a list of forms: a gateway's is one for every stream). */
  private readonly inKeys: Uint8Array;
  /** Whether a form holds a character past ASCII (a text ending in one is then searched too). */
  private readonly wide: boolean;

  /** `forms`: keyTexts(): the keys in each form, the longest first. */
  constructor(private readonly forms: readonly string[]) {
    let table = TABLES.get(forms);
    if (!table) TABLES.set(forms, (table = tableOf(forms)));
    ({ inKeys: this.inKeys, wide: this.wide } = table);
  }

  /** Whether some text is held back. */
  get holding(): boolean {
    return !!this.held?.size;
  }

  /** Whether `text` may go out as it is in any stream: nothing held, no key in it, no key's start at its end. */
  clean(text: string): boolean {
    return !this.holding && !this.startAtEnd(text) && !this.hasKey(text);
  }

  /** Whether `text`, as stream `name`'s next, must be changed (piece()). */
  needs(name: string, text: string): boolean {
    return !!this.held?.has(name) || this.startAtEnd(text) > 0 || this.hasKey(text);
  }

  /** Stream `name`'s next text as it goes out: what was held before it, keys masked, a key's start at its end held back. */
  piece(name: string, text: string, shape?: Body): string {
    const before = this.held?.get(name);
    if (before) {
      this.held!.delete(name);
      text = before.text + text;
    }
    for (const form of this.forms) if (text.includes(form)) text = text.replaceAll(form, KEY_MASK);
    const keep = this.startAtEnd(text);
    if (!keep) return text;
    (this.held ??= new Map()).set(name, { text: text.slice(-keep), shape });
    return text.slice(0, -keep);
  }

  /** Lets go what is held for the streams whose names start with `prefix` (all when ''): each stream's name, text and shape. */
  release(prefix = ''): { name: string; text: string; shape?: Body }[] {
    const out: { name: string; text: string; shape?: Body }[] = [];
    if (!this.held) return out;
    for (const [name, held] of this.held) {
      if (!name.startsWith(prefix)) continue;
      out.push({ name, ...held });
      this.held.delete(name);
    }
    return out;
  }

  /** `value`'s strings, deep, with each form masked (maskStrings). */
  maskIn(value: Body): void {
    maskStrings(value, '\\', this.forms);
  }

  private hasKey(text: string): boolean {
    for (const form of this.forms) if (text.includes(form)) return true;
    return false;
  }

  /** The length of the longest end of `text` that is a form's start (not all of it); 0 when none. */
  private startAtEnd(text: string): number {
    const last = text.charCodeAt(text.length - 1);
    if (!(last < 128 ? this.inKeys[last] : this.wide)) return 0;
    let longest = 0;
    for (const form of this.forms) {
      for (let at = text.indexOf(form[0]!, Math.max(0, text.length - form.length + 1)); at >= 0; at = text.indexOf(form[0]!, at + 1)) {
        const n = text.length - at;
        if (n <= longest) break;
        if (form.startsWith(text.slice(at))) longest = n;
      }
    }
    return longest;
  }
}

/** The text members of a chat delta that are streams of their own, per choice. */
const DELTA_TEXTS = ['content', 'reasoning', 'reasoning_content', 'refusal'] as const;

const isObject = (v: unknown): v is Body => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A parsed chat chunk's texts through `scrub` (each choice's delta texts and tool calls' arguments, each a
 * stream); a choice that finishes in it gets what was held for it. True when the chunk was changed.
 */
export function scrubChatChunk(scrub: TextScrub, chunk: Body): boolean {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return false;
  let changed = false;
  for (const choice of choices) {
    if (!isObject(choice)) continue;
    const i = String(choice.index ?? 0);
    const delta = isObject(choice.delta) ? choice.delta : undefined;
    for (const field of DELTA_TEXTS) {
      const text = delta?.[field];
      if (typeof text !== 'string' || !scrub.needs(`${i}.${field}`, text)) continue;
      delta![field] = scrub.piece(`${i}.${field}`, text);
      changed = true;
    }
    if (Array.isArray(delta?.tool_calls)) {
      for (const call of delta.tool_calls as unknown[]) {
        const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
        const name = `${i}.tool.${String((call as Body)?.index ?? 0)}`;
        if (typeof fn?.arguments !== 'string' || !scrub.needs(name, fn.arguments)) continue;
        fn.arguments = scrub.piece(name, fn.arguments);
        changed = true;
      }
    }
    if (choice.finish_reason != null && scrub.holding) {
      const held = scrub.release(`${i}.`);
      if (held.length) {
        choice.delta = { ...delta, ...heldDelta(held) };
        changed = true;
      }
    }
  }
  return changed;
}

/** What is still held at a chat stream's end, as one chunk's choices (undefined when nothing is). */
export function heldChoices(scrub: TextScrub): Body[] | undefined {
  if (!scrub.holding) return undefined;
  const byChoice = new Map<string, { name: string; text: string }[]>();
  for (const held of scrub.release()) {
    const i = held.name.slice(0, held.name.indexOf('.'));
    byChoice.set(i, [...(byChoice.get(i) ?? []), held]);
  }
  return [...byChoice].map(([i, held]) => ({ index: Number(i), delta: heldDelta(held), finish_reason: null }));
}

/** Held texts of one choice as the delta that carries them (a tool call's arguments under its index). */
function heldDelta(held: { name: string; text: string }[]): Body {
  const delta: Body = {};
  for (const { name, text } of held) {
    const [, field, index] = name.split('.');
    if (field === 'tool') ((delta.tool_calls ??= []) as Body[]).push({ index: Number(index), function: { arguments: text } });
    else delta[field!] = text;
  }
  return delta;
}

/**
 * A parsed Responses event through `scrub`: a `.delta` event's text as its stream's next (by type, item
 * and content part); before any other event, what is held goes out as the delta events it was taken
 * from (returned, to send first). Audio's base64 deltas are no text and pass as they are.
 */
export function scrubResponsesEvent(scrub: TextScrub, event: Body): Body[] | undefined {
  const type = event.type;
  if (typeof type === 'string' && type.endsWith('.delta') && type !== 'response.audio.delta' && typeof event.delta === 'string') {
    const name = `${type}|${String(event.item_id)}|${String(event.output_index)}|${String(event.content_index ?? event.summary_index ?? '')}`;
    if (scrub.needs(name, event.delta)) event.delta = scrub.piece(name, event.delta, { ...event, delta: '' });
    return undefined;
  }
  // Any other event's strings (a `.done` text, the final response's output) searched decoded: a key escaped in them too.
  scrub.maskIn(event);
  if (!scrub.holding) return undefined;
  return scrub.release().map(({ text, shape }) => ({ ...shape, delta: text }));
}

/**
 * A whole answer, parsed, with each form of a key masked in its strings, when its text has an escape
 * (`\u0073k-…` is a key that KeyScrub's search of the bytes cannot see); `answer` itself, else.
 */
export function maskStrings<T>(answer: T, text: string, forms: readonly string[]): T {
  if (!forms.length || !text.includes('\\')) return answer;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      let text = value;
      for (const form of forms) if (text.includes(form)) text = text.replaceAll(form, KEY_MASK);
      return text;
    }
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) value[i] = walk(value[i]);
    else if (isObject(value)) for (const k in value) value[k] = walk(value[k]);
    return value;
  };
  return walk(answer) as T;
}

import { KEY_MASK, leastStart, maskedFrom, type KeyForm } from './key-scrub.js';

/**
 * Where a text's end or start meets a key's form (keyFormList): the searches text-scrub.ts makes of each
 * text it sees, as functions of the forms and of a table made once for a list of them.
 */

/**
 * `inKeys`: each ASCII character some form holds, by code; `wide`: a form holds one past ASCII; `probes`: each form's
 * least start masked wherever it stands (leastStart); `cleanFields`, `cleanNames`: strings and member names text-scrub.ts
 * found clean of these forms (kept(): what it finds depends on the text and the forms only, so every scrub of the
 * gateway shares them, and a whole answer's `usage` names are known clean from the answers before it).
 */
export type FormTable = { inKeys: Uint8Array; wide: boolean; probes: string[]; cleanFields: Set<string>; cleanNames: Set<string> };

/** How many clean strings a table keeps (a random `obfuscation`, an id, is one each time: the set is emptied when full), and their longest. */
const CLEAN_KEPT = 512;
const CLEAN_LONGEST = 200;

/** Adds `text` to a table's set of clean ones (kept only when short: a long answer's text is not kept alive). */
export function kept(set: Set<string>, text: string): void {
  if (text.length > CLEAN_LONGEST) return;
  if (set.size >= CLEAN_KEPT) set.clear();
  set.add(text);
}

const TABLES = new WeakMap<readonly KeyForm[], FormTable>();

/** The table of `forms`, made once for a list (a gateway's is one for every stream). */
export function tableOf(forms: readonly KeyForm[]): FormTable {
  const made = TABLES.get(forms);
  if (made) return made;
  const inKeys = new Uint8Array(128);
  let wide = false;
  for (const { text } of forms) {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) < 128) inKeys[text.charCodeAt(i)] = 1;
      else wide = true;
    }
  }
  const table = { inKeys, wide, probes: forms.map((form) => form.text.slice(0, leastStart(form))), cleanFields: new Set<string>(), cleanNames: new Set<string>() };
  TABLES.set(forms, table);
  return table;
}

/** Whether `text[at..end)` is `form`'s start. */
export function startsAt(text: string, at: number, end: number, form: string): boolean {
  for (let i = at; i < end; i++) if (text.charCodeAt(i) !== form.charCodeAt(i - at)) return false;
  return true;
}

/**
 * What a stream whose sent text ends with `tail` (an open start, or shorter) comes to with `text` next:
 * -1 when a form goes on past its open start or ends in it, or a start of one leastStart() long ends in
 * `text` (the text must be hidden or held), else the longest end of `tail + text` reaching into `tail`
 * that is still a form's open start (0: none).
 */
export function goesOn(forms: readonly KeyForm[], tail: string, text: string): number {
  let longest = 0;
  for (const { text: form, open } of forms) {
    for (let at = 0; at < tail.length; at++) {
      const n = tail.length - at;
      if (n >= form.length || !startsAt(tail, at, tail.length, form)) continue;
      const rest = form.length - n;
      let m = 0;
      while (m < text.length && m < rest && text.charCodeAt(m) === form.charCodeAt(n + m)) m++;
      if (m === Math.min(text.length, rest)) {
        if (n + text.length > open || text.length >= rest) return -1;
        longest = Math.max(longest, n + text.length);
      } else if (n + m >= leastStart({ text: form, open })) return -1; // a start cut short in the text's middle
    }
  }
  return longest;
}

/** formEnds() of a text that ends with no form's start (most texts): one answer, not one made per text. */
const NO_END = Object.freeze({ longest: 0, over: 0 });

/**
 * The ends of `text[0..end)` that are a form's start (not all of it): the longest (0: none), and the
 * longest that reaches past its form's open start (0: none).
 */
export function formEnds(forms: readonly KeyForm[], table: FormTable, text: string, end: number): Readonly<{ longest: number; over: number }> {
  let longest = 0;
  let over = 0;
  const last = text.charCodeAt(end - 1);
  if (!(last < 128 ? table.inKeys[last] : table.wide)) return NO_END;
  for (const { text: form, open } of forms) {
    // The first start found is the longest of this form's.
    for (let at = text.indexOf(form[0]!, Math.max(0, end - form.length + 1)); at >= 0 && at < end; at = text.indexOf(form[0]!, at + 1)) {
      if (!startsAt(text, at, end, form)) continue;
      longest = Math.max(longest, end - at);
      if (end - at > open) over = Math.max(over, end - at);
      break;
    }
  }
  return longest ? { longest, over } : NO_END;
}

/**
 * The least of a key's rest a text after its start must begin with to be taken as going on with it, unless it is all of
 * that text: a string that begins with the one character that ends a key ("function" after a key's start less its `f`)
 * does so by chance one time in 64.
 */
const GOES_ON = 4;

/**
 * How many of `text`'s first characters go on with a form whose start `end` (the end of the text before it,
 * elsewhere) is, to leastStart() or more together (0: none).
 */
export function goesOnFrom(forms: readonly KeyForm[], end: string, text: string): number {
  let most = 0;
  for (const form of forms) {
    for (let at = 0; at < end.length; at++) {
      const n = end.length - at;
      if (n >= form.text.length || !startsAt(end, at, end.length, form.text)) continue;
      let m = 0;
      while (m < text.length && n + m < form.text.length && text.charCodeAt(m) === form.text.charCodeAt(n + m)) m++;
      if ((m >= GOES_ON || (m && m === text.length)) && n + m >= leastStart(form)) most = Math.max(most, m);
    }
  }
  return most;
}

/** The characters a text that goes on with a form whose start `end` ends with may begin with (goesOnFrom's first test, made once per `end`). */
export function nextChars(forms: readonly KeyForm[], end: string): string {
  let chars = '';
  for (const { text: form } of forms) {
    for (let at = 0; at < end.length; at++) {
      const n = end.length - at;
      if (n < form.length && startsAt(end, at, end.length, form) && !chars.includes(form[n]!)) chars += form[n];
    }
  }
  return chars;
}

/** The least of a key's start masked where a cut left it (its stream ended): as maskKeyStarts'. */
const CUT = 8;

/** `end`, or where a whole form that reaches past it starts (in `text` from `from`), so that no form is cut in two. */
export function notAcross(texts: readonly string[], text: string, from: number, end: number): number {
  for (let moved = true; moved && end > from; ) {
    moved = false;
    for (const form of texts) {
      for (let at = text.indexOf(form, Math.max(from, end - form.length + 1)); at >= 0 && at < end; at = text.indexOf(form, at + 1)) {
        if (at + form.length > end) {
          end = at;
          moved = true;
        }
      }
    }
  }
  return end;
}

/**
 * What is held (`seen` from `from`: an end reaching past a form's open start) as it goes out when its stream
 * ends, or another event comes, before the key's rest: a key's start cut short is as secret as the key, so the
 * part past the open start is masked when the start is CUT characters or more (as maskKeyStarts, docs/keys.md).
 */
export function cutStart(forms: readonly KeyForm[], seen: string, from: number): string {
  let start = seen.length;
  for (const { text: form, open } of forms) {
    for (let at = Math.max(0, seen.length - form.length + 1); at < seen.length; at++) {
      if (seen.length - at > Math.max(open, CUT - 1) && startsAt(seen, at, seen.length, form)) start = Math.min(start, at + open);
    }
  }
  return start < seen.length ? `${maskedFrom(seen.slice(0, Math.max(from, start)), forms, from)}${KEY_MASK}` : maskedFrom(seen, forms, from);
}

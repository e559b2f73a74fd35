import { keyKind } from '../../internal/hide-secrets.js';

/** What a provider key in an upstream's answer becomes (the refusals' and metadata's word for it too). */
export const KEY_MASK = '[provider key]';
const MASK = Buffer.from(KEY_MASK);

/**
 * An upstream's answer, as its bytes arrive, with every provider key in it replaced by `[provider key]`:
 * a key split between two network reads too. A read is searched for each key's bytes (Buffer.indexOf);
 * only when it ends with the start of a key are those last bytes held back for the next read (or the
 * end). A stream's event ends with a blank line, which no key holds: a whole event is never held back.
 * `keys` are keyBytes(): each key in each form it is written back in (keyForms), each a search of each
 * read (Buffer.indexOf, O(read)); a key split between the text of two events is text-scrub.ts's.
 */
export class KeyScrub {
  private held: Buffer | undefined;
  /** Each byte value that some key holds: a read that ends in another (a line end, a `}`) ends no key's start. */
  constructor(
    protected readonly keys: readonly Buffer[],
    private readonly inKeys: Uint8Array = bytesOf(keys),
  ) {}

  /** What of `piece` (and what was held back) can go on now; the same Buffer when it holds no key. */
  push(piece: Buffer): Buffer {
    let bytes = this.held ? Buffer.concat([this.held, piece]) : piece;
    this.held = undefined;
    bytes = masked(bytes, this.keys);
    const keep = bytes.length && this.inKeys[bytes[bytes.length - 1]!] ? keyStartAtEnd(bytes, this.keys) : 0;
    if (!keep) return bytes;
    // Copied: the held bytes must not keep a whole large read alive.
    this.held = Buffer.from(bytes.subarray(bytes.length - keep));
    return bytes.subarray(0, bytes.length - keep);
  }

  /** The bytes held back at the end of the answer: the start of a key that never came whole. */
  end(): Buffer | undefined {
    const rest = this.held;
    this.held = undefined;
    return rest;
  }
}

/** The byte values the keys hold, as a table by value. */
export function bytesOf(keys: readonly Buffer[]): Uint8Array {
  const table = new Uint8Array(256);
  for (const key of keys) for (const b of key) table[b] = 1;
  return table;
}

/** `bytes` with each key replaced by the mask: `bytes` itself when none is in it. */
function masked(bytes: Buffer, keys: readonly Buffer[]): Buffer {
  for (const key of keys) {
    let at = bytes.indexOf(key);
    if (at < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (; at >= 0; at = bytes.indexOf(key, from)) {
      parts.push(bytes.subarray(from, at), MASK);
      from = at + key.length;
    }
    parts.push(bytes.subarray(from));
    bytes = Buffer.concat(parts);
  }
  return bytes;
}

/** The length of the longest end of `bytes` that is the start of a key (a key's first bytes, not all of it); 0 when none. */
function keyStartAtEnd(bytes: Buffer, keys: readonly Buffer[]): number {
  let longest = 0;
  for (const key of keys) {
    const first = key[0]!;
    for (let at = bytes.indexOf(first, Math.max(0, bytes.length - key.length + 1)); at >= 0; at = bytes.indexOf(first, at + 1)) {
      const n = bytes.length - at;
      if (n > longest && bytes.compare(key, 0, n, at) === 0) longest = n;
      if (n <= longest) break;
    }
  }
  return longest;
}

/**
 * Whether a configured key is hidden where it shows: one of 8 characters or more with a digit, or of 20
 * or more. A shorter one, or a word such as the placeholders local servers take (`anything`,
 * `not-needed`, `lm-studio`), would mask what answers say; no provider's key is one.
 */
export function hiddenKey(key: string | undefined): key is string {
  return !!key && key.length >= 8 && (key.length >= 20 || /[0-9]/.test(key));
}

/** The provider keys to hide, as bytes (hiddenKey, in every form keyForms names), the longest first (a key that begins another, hidden first, would leave the other's rest shown). */
export function keyBytes(keys: readonly (string | undefined)[]): Buffer[] {
  return keyTexts(keys).map((k) => Buffer.from(k));
}

/** keyBytes() as text: each key hidden (hiddenKey) in each of its forms, once, the longest first. */
export function keyTexts(keys: readonly (string | undefined)[]): string[] {
  return keyFormList(keys).map((form) => form.text);
}

/** A form of a key (keyForms) and how long a start of it tells nothing of the key: the part its kind alone makes. */
export interface KeyForm {
  text: string;
  open: number;
}

/** keyTexts() with each form's open start (the least of two keys' when they share a form), the longest first. */
export function keyFormList(keys: readonly (string | undefined)[]): KeyForm[] {
  const open = new Map<string, number>();
  for (const form of keys.filter(hiddenKey).flatMap(formsOf)) open.set(form.text, Math.min(form.open, open.get(form.text) ?? form.open));
  return [...open].map(([text, n]) => ({ text, open: n })).sort((a, b) => b.text.length - a.text.length);
}

/** The shortest run of base64 characters taken as a key's (72 bits: no chance match in a megabyte of base64). */
const BASE64_RUN = 12;

/** The forms of `key` (keyForms), as text. */
export const keyForms = (key: string): string[] => [...new Set(formsOf(key).map((form) => form.text))];

/**
 * The forms a key is found in where an upstream writes it back (docs/keys.md): as it is; percent-encoded
 * (a URL, a form), with upper and lower case hex; JSON-escaped; and base64 (standard and URL-safe) at
 * each of the three alignments it can take in a longer text, which covers `Basic base64(user:KEY)`,
 * `base64("Bearer KEY")` and the key alone: for each, the run of base64 characters made of the key's
 * bits only (the characters at its ends also hold the bytes beside it, unknown here, and stay shown).
 * Each with its open start: the key's kind (keyKind: `sk-`, `sk-or-v1-`; none when it is all of the key),
 * which encoding leaves as it is (letters, digits, `-`, `_`), or in base64 the characters made of its bits alone.
 */
function formsOf(key: string): KeyForm[] {
  const kind = keyKind(key).length < key.length ? keyKind(key).length : 0;
  const json = JSON.stringify(key).slice(1, -1);
  const forms = [key, encodeURIComponent(key), encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), json, json.replaceAll('/', '\\/')].map((text) => ({ text, open: kind }));
  const bytes = Buffer.from(key);
  for (const pad of [0, 1, 2]) {
    const text = Buffer.concat([Buffer.alloc(pad), bytes]).toString('base64');
    const from = [0, 2, 3][pad]!;
    const run = text.slice(from, Math.floor(((pad + bytes.length) * 8) / 6));
    // The run's characters whose 6 bits are all the kind's: the first ones up to the kind's last bit.
    const open = Math.max(0, Math.floor(((pad + kind) * 8) / 6) - from);
    if (run.length >= BASE64_RUN) forms.push({ text: run, open }, { text: run.replaceAll('+', '-').replaceAll('/', '_'), open });
  }
  return forms;
}

/** The least of a form's start that is as secret as the key, wherever it stands: 8 characters, and past its open start. */
export const leastStart = (form: KeyForm): number => Math.max(form.open + 1, 8);

/**
 * Where `text` shows a key: each form whole, and each start of one cut short (`Incorrect API key provided:
 * sk-or-v1-0123…`, `sk-or-v1-0123 and more`) of leastStart() or more, wherever it stands: such a start is as secret
 * as the key. As [from, to) pairs in order, joined where they overlap; undefined when there is none.
 */
export function keySpans(text: string, forms: readonly KeyForm[]): [number, number][] | undefined {
  let spans: [number, number][] | undefined;
  for (const form of forms) {
    const key = form.text;
    const least = Math.min(leastStart(form), key.length);
    const probe = key.slice(0, least);
    for (let at = text.indexOf(probe); at >= 0; at = text.indexOf(probe, at + 1)) {
      let n = least;
      while (n < key.length && text.charCodeAt(at + n) === key.charCodeAt(n)) n++;
      // Not after an escape's backslash: the character it escapes would be read with the text after the mask.
      while (n > least && key.charCodeAt(n - 1) === 92) n--;
      if (key.charCodeAt(n - 1) === 92) continue;
      (spans ??= []).push([at, at + n]);
    }
  }
  if (!spans || spans.length === 1) return spans;
  spans.sort((a, b) => a[0] - b[0]);
  const joined: [number, number][] = [spans[0]!];
  for (const [from, to] of spans) {
    const last = joined[joined.length - 1]!;
    if (from <= last[1]) last[1] = Math.max(last[1], to);
    else joined.push([from, to]);
  }
  return joined;
}

/** `text` from `from` on with each span of keySpans() masked (a span that begins before `from`, from there). */
export function maskedFrom(text: string, forms: readonly KeyForm[], from = 0): string {
  const spans = keySpans(text, forms);
  if (!spans) return from ? text.slice(from) : text;
  let out = '';
  let at = from;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    out += `${text.slice(at, Math.max(at, start))}${KEY_MASK}`;
    at = end;
  }
  return out + text.slice(at);
}

/** `text` (an upstream's words: a refusal, an error, a recording) with each key shown in it masked (keySpans). */
export const maskKeyStarts = (text: string, forms: readonly KeyForm[]): string => maskedFrom(text, forms);

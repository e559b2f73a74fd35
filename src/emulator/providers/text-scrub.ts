import { KEY_MASK, maskedFrom, type KeyForm } from './key-scrub.js';
import { cutStart, formEnds, goesOn, goesOnFrom, kept, nextChars, notAcross, startsAt, tableOf, type FormTable } from './form-ends.js';

export { hiddenKey, keyFormList, keyTexts, type KeyForm } from './key-scrub.js';

/**
 * A whole answer, parsed, with each key in its strings masked as a stream's other strings are (TextScrub.field): whole,
 * a start cut short, and what goes on with a key whose start the string before it ended with (an id then a content);
 * `answer` itself, changed in place. Nothing is searched when no key is configured.
 */
export function maskAnswer<T>(answer: T, forms: readonly KeyForm[]): T {
  if (forms.length) new TextScrub(forms).fieldOf({ answer }, 'answer');
  return answer;
}

type Body = Record<string, unknown>;

/** `owner` with its members named anew (`renames`: TextScrub.named()), in place and in their order; true. */
export function renamed(owner: Body, renames: Map<string, string>): true {
  const members = Object.entries(owner);
  for (const [key] of members) delete owner[key];
  for (const [key, value] of members) owner[renames.get(key) ?? key] = value;
  return true;
}

/** The members the APIs name in every chunk and event: no key, and left as they are (a set's look-up, not name()'s searches). */
const API_NAMES = new Set(['id', 'object', 'created', 'model', 'choices', 'index', 'delta', 'role', 'content', 'finish_reason', 'logprobs', 'tool_calls', 'type', 'function', 'name', 'arguments', 'sequence_number', 'item_id', 'output_index', 'content_index', 'obfuscation', 'text', 'system_fingerprint', 'provider', 'service_tier', 'native_finish_reason', 'reasoning', 'refusal', 'usage']);

const CROSSES = 4; // how many streams' ends that start a form a scrub keeps (TextScrub.crosses)
/** The name an upstream's string that is no stream's text (field()) notes the start of a key it ends with under. */
const FIELD = '\u0000field';

/** A stream's state: its text held back (and the event it was taken from), and the open start of a key its sent text ends with. */
interface Stream {
  held: string;
  shape?: Body;
  tail: string;
}

/**
 * Provider keys hidden across a stream's events: KeyScrub's rule applied to the text each event adds to
 * a stream of text of its own (a chat choice's content, reasoning, refusal, a tool call's arguments; a
 * Responses delta stream), decoded. An upstream that sends `"content":"sk-abc"` then `"content":"def…"`
 * has no key in any one event's bytes (KeyScrub sees none). Each form of a key (keyFormList) has an open
 * start, which tells nothing of the key: its kind (`sk-`, `sk-or-v1-`; none for a key of no kind), or in
 * base64 the characters its kind's bits alone make. A text that ends with a start of a form that reaches
 * past that open start has that start held back and put before that stream's next text, where a whole key
 * is masked; what is still held when the stream's choice finishes (or the stream ends) goes out then. A
 * text that ends with an open start alone (`s`, `sk-` of `sk-…`) goes out as it is, and the stream keeps
 * that end (its tail): a next text that goes on with the key past the open start is held in turn, and one
 * that finishes it has the rest masked (`sk-[provider key]`: the open start was sent). The caller's joined
 * text never holds a whole form, nor more of one's start than its open start: one released unfinished (its
 * stream ended, another event came) has its rest masked (`sk-or-v1-[provider key]`).
 *
 * Cost, per event's text: a search of it for each form (`includes`, O(text), as KeyScrub's of each read),
 * a table look-up of its last character and, when a key holds that character, a search of its last
 * characters for each form's start; a stream with a tail compares the next text's start with each form.
 * No copy but the tail (a few characters), no delay. Only a text that ends with more than an open start
 * (or goes on with one) is copied and held, no longer than until its stream's next event; the chunk it
 * came in is then parsed and framed anew (a plain chunk is otherwise framed from its bytes). No scrub at
 * all when no key is configured.
 */
export class TextScrub {
  private streams: Map<string, Stream> | undefined;
  /** How many streams hold text back. */
  private holds = 0;
  private readonly table: FormTable;
  private readonly texts: string[];
  private readonly probes: string[];
  /** The last texts' ends that start a form, one a stream ('' when joined; FIELD), newest last, each with nextChars() when asked. */
  private crosses: { end: string; name: string; first?: string }[] = [];
  /** The end crossing() last found a text going on with. */
  private cross = '';
  /** Strings field() found clean (a chunk's id, its fingerprint, an event's type: the same in each), the table's: every scrub's. */
  private readonly cleanFields: Set<string>;
  /** Member names name() found clean (the same in each chunk, event or answer), the table's. */
  private readonly cleanNames: Set<string>;

  /** `forms`: keyFormList(): the keys in each form, the longest first. */
  constructor(private readonly forms: readonly KeyForm[]) {
    this.table = tableOf(forms);
    this.probes = this.table.probes;
    this.cleanFields = this.table.cleanFields;
    this.cleanNames = this.table.cleanNames;
    this.texts = forms.map((form) => form.text);
  }

  /** Whether some text is held back. */
  get holding(): boolean {
    return this.holds > 0;
  }

  /**
   * Whether `text`, as stream `name`'s next, must be changed (piece()); when not, it goes out as it is and
   * the stream keeps the open start it ends with (nothing changes when it must be).
   */
  needs(name: string, text: string): boolean {
    const stream = this.streams?.get(name);
    if (stream?.held || this.hasKey(text) || this.crossing(name, text)) return true;
    const goes = stream ? goesOn(this.forms, stream.tail, text) : 0;
    if (goes < 0) return true;
    const end = this.ends(text, text.length);
    if (end.over) return true;
    if (goes > text.length) stream!.tail = `${stream!.tail}${text}`.slice(-goes);
    else if (end.longest || goes) {
      const tail = text.slice(-Math.max(goes, end.longest));
      if (stream) stream.tail = tail;
      else (this.streams ??= new Map()).set(name, { held: '', tail });
    } else if (stream) this.streams!.delete(name);
    this.noteCross(name, this.streams?.get(name)?.tail ?? '');
    return false;
  }

  /** Stream `name`'s next text as it goes out: what was held before it, keys masked, a key's start past its open start held back. */
  piece(name: string, whole: string, shape?: Body): string {
    const stream = this.streams?.get(name);
    // What goes on with a key whose start another stream's text ended with: masked, the rest taken as this stream's
    // (a key split between reasoning and content, two tool calls); what this stream held goes out first, as at its end.
    const crossed = this.crossing(name, whole);
    const before = crossed && stream?.held ? cutStart(this.forms, `${stream.tail}${stream.held}`, stream.tail.length) : '';
    if (crossed && stream) {
      if (stream.held) this.holds--;
      [stream.held, stream.tail] = ['', ''];
    }
    const text = whole.slice(crossed);
    const tail = stream?.tail ?? '';
    if (stream?.held) this.holds--;
    const all = `${tail}${stream?.held ?? ''}${text}`;
    // A key whose open start went out with the last text: the rest masked from where this one begins.
    // Not while a longer key that one begins is still coming (its start reaches the end): held whole below.
    let cut = tail.length;
    let coming = false;
    for (const { text: form } of this.forms) {
      for (let at = Math.max(0, tail.length - form.length + 1); at < tail.length; at++) {
        if (at + form.length > cut && all.startsWith(form, at)) cut = at + form.length;
        else if (at + form.length > all.length && startsAt(all, at, all.length, form)) coming = true;
      }
    }
    if (coming) cut = tail.length;
    const seen = `${tail}${cut > tail.length ? `${KEY_MASK}${all.slice(cut)}` : all.slice(tail.length)}`;
    // Held back: each end that reaches past a form's open start, until what goes out ends with none; found before
    // whole forms are masked, as a key another key begins is whole in the longer one's start.
    let end = seen.length;
    for (let over = this.ends(seen, end).over; over && end > tail.length; over = this.ends(seen, end).over) end = Math.max(tail.length, end - over);
    end = notAcross(this.texts, seen, tail.length, end);
    const held = seen.slice(end);
    const out = maskedFrom(seen.slice(0, end), this.forms, tail.length);
    const sent = `${tail}${out}`;
    const longest = this.ends(sent, sent.length).longest;
    this.keep(name, held, held ? shape : undefined, longest ? sent.slice(-longest) : '');
    const last = crossed === whole.length ? `${this.cross}${whole}` : `${sent}${held}`;
    this.noteCross(crossed === whole.length ? '' : name, last.slice(last.length - this.ends(last, last.length).longest));
    return crossed ? `${before}${KEY_MASK}${out}` : out;
  }

  /**
   * `end` as the last text's start of a form, of stream `name`. A text that ends with none leaves it: what goes on with
   * that key later, in any other string (a text after another between them, an `obfuscation`), is masked all the same;
   * so does another stream's or string's end between them (`abc`, a fingerprint `fp_abc`: base64's `c2st…` of `sk-…`).
   */
  private noteCross(name: string, end: string): void {
    if (!end) return;
    // Each stream's (and the strings', FIELD) last, the newest CROSSES: another's end between does not take its place.
    const crosses = [...this.crosses.filter((c) => c.name !== name), { end, name }];
    this.crosses = crosses.length > CROSSES ? crosses.slice(-CROSSES) : crosses;
  }

  /** How many of `text`'s first characters go on with a form another stream's text began, to leastStart() or more (0: none), its end then `cross`; a field's text (no `name`) with any's. */
  private crossing(name: string | undefined, text: string): number {
    let most = 0;
    for (const c of this.crosses) {
      // A stream that goes on from its own end: its tail's (needs(), piece()), while it keeps one.
      if (name === c.name && this.streams?.has(name)) continue;
      // Most texts begin with none of the few characters that go on with it: one search of a short string.
      if (!(c.first ??= nextChars(this.forms, c.end)).includes(text.charAt(0))) continue;
      const n = goesOnFrom(this.forms, c.end, text);
      if (n > most) [most, this.cross] = [n, c.end];
    }
    // A text that goes on as far with its own stream's end (the same key begun in both) goes on with that one.
    const own = name === undefined ? undefined : this.streams?.get(name);
    return most && own && goesOnFrom(this.forms, `${own.tail}${own.held}`, text) >= most ? 0 : most;
  }

  /** Lets go what is held for the streams whose names start with `prefix` (all when ''): each stream's name, text and shape. */
  release(prefix = ''): { name: string; text: string; shape?: Body }[] {
    const out: { name: string; text: string; shape?: Body }[] = [];
    if (!this.holds) return out;
    for (const [name, stream] of this.streams!) {
      if (!stream.held || !name.startsWith(prefix)) continue;
      // What went out may go on in the stream's next text: a key it finishes is masked there (its start was sent).
      const seen = `${stream.tail}${stream.held}`;
      out.push({ name, text: cutStart(this.forms, seen, stream.tail.length), shape: stream.shape });
      this.keep(name, '', undefined, seen.slice(seen.length - this.ends(seen, seen.length).longest));
      this.holds--;
    }
    return out;
  }

  /**
   * An upstream's string that is no stream's text (an id, a fingerprint, a tool call's id, an `obfuscation`), as it goes
   * out: each key and start of one cut short masked (maskedFrom), as in a whole answer; what goes on with a key whose
   * start the text before it ended with (a stream's or another string's), masked, as a stream's text is (piece()); the
   * start of a key it ends with noted for the text after it. A value it let go clean last (a chunk's id, its
   * fingerprint: the same in every chunk) is a string compare when no text before it ended with a key's start.
   */
  field(text: string): string {
    const crossed = this.crossing(undefined, text);
    if (!crossed && this.cleanFields.has(text)) return text;
    const rest = crossed ? text.slice(crossed) : text;
    const out = this.hasKey(rest) ? maskedFrom(rest, this.forms) : rest;
    const last = crossed === text.length ? `${this.cross}${text}` : text;
    const end = this.ends(last, last.length).longest;
    if (end) this.noteCross(FIELD, last.slice(last.length - end));
    else if (!crossed && out === text) kept(this.cleanFields, text);
    return crossed ? `${KEY_MASK}${out}` : out;
  }

  /**
   * Whether each string value of a plain chunk's JSON text (no escapes outside its content: plain-frames.ts) but its
   * content goes through field() as it is (the start of a key one ends with is noted, as field() notes it). A chunk
   * with one that does not is parsed, and its strings then go through field() in its place.
   */
  inertMembers(json: string): boolean {
    for (const [, before, text, name] of json.matchAll(/("content":)?"([^"\\]*)"(:?)/g)) {
      if (!before && !name && text && this.field(text!) !== text) return false;
    }
    return true;
  }

  /** `owner[k]` through field(), and each string of it, deep, its members' names too (name()), in the order they are written; true when one changed. */
  fieldOf(owner: Body | unknown[], k: string | number): boolean {
    const v = (owner as Body)[k];
    if (typeof v === 'string') {
      const out = this.field(v);
      if (out === v) return false;
      (owner as Body)[k] = out;
      return true;
    }
    let changed = false;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) changed = this.fieldOf(v, i) || changed;
    else if (v && typeof v === 'object') {
      let renames: Map<string, string> | undefined;
      for (const key in v) {
        renames = this.named(key, renames);
        changed = this.fieldOf(v as Body, key) || changed;
      }
      if (renames) changed = renamed(v as Body, renames);
    }
    return changed;
  }

  /**
   * A member's name as it goes out (before its value, as written), masked as field() masks a string. The start of a key
   * it ends with is noted only when 3 characters or more: names such as `choices` end with a key's first character, and
   * noting that would forget a start a string before them ended with.
   */
  name(key: string): string {
    const crossed = this.crossing(undefined, key);
    if (!crossed && this.cleanNames.has(key)) return key;
    const rest = crossed ? key.slice(crossed) : key;
    const out = this.hasKey(rest) ? maskedFrom(rest, this.forms) : rest;
    const last = crossed === key.length ? `${this.cross}${key}` : key;
    const end = this.ends(last, last.length).longest;
    if (end >= 3) this.noteCross(FIELD, last.slice(last.length - end));
    else if (!crossed && out === key) kept(this.cleanNames, key);
    return crossed ? `${KEY_MASK}${out}` : out;
  }

  /** `renames` with `key` (an object's member) when name() changes it; renamed() then gives the object its new names. */
  named(key: string, renames?: Map<string, string>): Map<string, string> | undefined {
    if (API_NAMES.has(key)) return renames;
    const name = this.name(key);
    return name === key ? renames : (renames ?? new Map<string, string>()).set(key, name);
  }

  private keep(name: string, held: string, shape: Body | undefined, tail: string): void {
    if (!held && !tail) {
      this.streams?.delete(name);
      return;
    }
    if (held) this.holds++;
    (this.streams ??= new Map()).set(name, { held, shape, tail });
  }

  /** Whether `text` holds a key whole or a start of one that is masked wherever it stands (leastStart). */
  hasKey(text: string): boolean {
    for (const probe of this.probes) if (text.includes(probe)) return true;
    return false;
  }

  private ends(text: string, end: number): Readonly<{ longest: number; over: number }> {
    return formEnds(this.forms, this.table, text, end);
  }
}

import { KEY_MASK, leastStart, maskedFrom, maskStrings, type KeyForm } from './key-scrub.js';

export { hiddenKey, keyFormList, keyTexts, maskStrings, type KeyForm } from './key-scrub.js';

type Body = Record<string, unknown>;

/** The least of a key's start masked where a cut left it (its stream ended): as maskKeyStarts'. */
const CUT = 8;

/** `probes`: each form's least start masked wherever it stands (leastStart): a text that holds none holds no key. */
type Table = { inKeys: Uint8Array; wide: boolean; probes: string[] };

const TABLES = new WeakMap<readonly KeyForm[], Table>();

function tableOf(forms: readonly KeyForm[]): Table {
  const inKeys = new Uint8Array(128);
  let wide = false;
  for (const { text } of forms) {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) < 128) inKeys[text.charCodeAt(i)] = 1;
      else wide = true;
    }
  }
  return { inKeys, wide, probes: forms.map((form) => form.text.slice(0, leastStart(form))) };
}

/** A stream's state: its text held back (and the event it was taken from), and the open start of a key its sent text ends with. */
interface Stream {
  held: string;
  shape?: Body;
  tail: string;
}

/** Whether `text[at..end)` is `form`'s start. */
function startsAt(text: string, at: number, end: number, form: string): boolean {
  for (let i = at; i < end; i++) if (text.charCodeAt(i) !== form.charCodeAt(i - at)) return false;
  return true;
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
  /** Each ASCII character some form holds, by code (made once for a list of forms: a gateway's is one for every stream). */
  private readonly inKeys: Uint8Array;
  /** Whether a form holds a character past ASCII (a text ending in one is then searched too). */
  private readonly wide: boolean;
  private readonly texts: string[];
  private readonly probes: string[];
  /** The end of the last text of any stream that starts a form, and its stream ('' when joined across streams). */
  private cross = '';
  private crossName = '';
  /** The last two strings field() found clean. */
  private readonly cleanFields: (string | undefined)[] = [];

  /** `forms`: keyFormList(): the keys in each form, the longest first. */
  constructor(private readonly forms: readonly KeyForm[]) {
    let table = TABLES.get(forms);
    if (!table) TABLES.set(forms, (table = tableOf(forms)));
    ({ inKeys: this.inKeys, wide: this.wide, probes: this.probes } = table);
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
    const goes = stream ? this.goesOn(stream.tail, text) : 0;
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
    const before = crossed && stream?.held ? this.cutStart(`${stream.tail}${stream.held}`, stream.tail.length) : '';
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
    end = this.notAcross(seen, tail.length, end);
    const held = seen.slice(end);
    const out = maskedFrom(seen.slice(0, end), this.forms, tail.length);
    const sent = `${tail}${out}`;
    const longest = this.ends(sent, sent.length).longest;
    this.keep(name, held, held ? shape : undefined, longest ? sent.slice(-longest) : '');
    const last = crossed === whole.length ? `${this.cross}${whole}` : `${sent}${held}`;
    this.noteCross(crossed === whole.length ? '' : name, last.slice(last.length - this.ends(last, last.length).longest));
    return crossed ? `${before}${KEY_MASK}${out}` : out;
  }

  /** `end` as the last text's start of a form, of stream `name`: another stream's text that starts none (a tool's name) leaves it. */
  private noteCross(name: string, end: string): void {
    if (end || name === this.crossName) [this.cross, this.crossName] = [end, name];
  }

  /** How many of `text`'s first characters go on with a form another stream's last text began, to leastStart() or more (0: none). */
  private crossing(name: string, text: string): number {
    if (!this.cross || name === this.crossName) return 0;
    let most = 0;
    for (const form of this.forms) {
      for (let at = 0; at < this.cross.length; at++) {
        const n = this.cross.length - at;
        if (n >= form.text.length || !startsAt(this.cross, at, this.cross.length, form.text)) continue;
        let m = 0;
        while (m < text.length && n + m < form.text.length && text.charCodeAt(m) === form.text.charCodeAt(n + m)) m++;
        if (m && n + m >= leastStart(form)) most = Math.max(most, m);
      }
    }
    return most;
  }

  /** `end`, or where a whole form that reaches past it starts (in `text` from `from`), so that no form is cut in two. */
  private notAcross(text: string, from: number, end: number): number {
    for (let moved = true; moved && end > from; ) {
      moved = false;
      for (const form of this.texts) {
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

  /** Lets go what is held for the streams whose names start with `prefix` (all when ''): each stream's name, text and shape. */
  release(prefix = ''): { name: string; text: string; shape?: Body }[] {
    const out: { name: string; text: string; shape?: Body }[] = [];
    if (!this.holds) return out;
    for (const [name, stream] of this.streams!) {
      if (!stream.held || !name.startsWith(prefix)) continue;
      // What went out may go on in the stream's next text: a key it finishes is masked there (its start was sent).
      const seen = `${stream.tail}${stream.held}`;
      out.push({ name, text: this.cutStart(seen, stream.tail.length), shape: stream.shape });
      this.keep(name, '', undefined, seen.slice(seen.length - this.ends(seen, seen.length).longest));
      this.holds--;
    }
    return out;
  }

  /**
   * An upstream's string that is no stream's text (an id, a fingerprint, a tool call's id), as it goes out: each key
   * and start of one cut short masked (maskedFrom), as in a whole answer. The one function for such strings of a
   * stream; a value it let go last (a chunk's id, its fingerprint: the same in every chunk) is a string compare.
   */
  field(text: string): string {
    if (text === this.cleanFields[0] || text === this.cleanFields[1]) return text;
    if (this.hasKey(text)) return maskedFrom(text, this.forms);
    [this.cleanFields[1], this.cleanFields[0]] = [this.cleanFields[0], text];
    return text;
  }

  /** `value`'s strings, deep, with each form masked (maskStrings). */
  maskIn(value: Body): void {
    maskStrings(value, '\\', this.forms);
  }

  /**
   * What is held (`seen` from `from`: an end reaching past a form's open start) as it goes out when its stream
   * ends, or another event comes, before the key's rest: a key's start cut short is as secret as the key, so the
   * part past the open start is masked when the start is CUT characters or more (as maskKeyStarts, docs/keys.md).
   */
  private cutStart(seen: string, from: number): string {
    let start = seen.length;
    for (const { text: form, open } of this.forms) {
      for (let at = Math.max(0, seen.length - form.length + 1); at < seen.length; at++) {
        if (seen.length - at > Math.max(open, CUT - 1) && startsAt(seen, at, seen.length, form)) start = Math.min(start, at + open);
      }
    }
    return start < seen.length ? `${maskedFrom(seen.slice(0, Math.max(from, start)), this.forms, from)}${KEY_MASK}` : maskedFrom(seen, this.forms, from);
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

  /**
   * What a stream whose sent text ends with `tail` (an open start, or shorter) comes to with `text` next:
   * -1 when a form goes on past its open start or ends in it, or a start of one leastStart() long ends in
   * `text` (piece() must hide or hold it), else the
   * longest end of `tail + text` reaching into `tail` that is still a form's open start (0: none).
   */
  private goesOn(tail: string, text: string): number {
    let longest = 0;
    for (const { text: form, open } of this.forms) {
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

  /**
   * The ends of `text[0..end)` that are a form's start (not all of it): the longest (0: none), and the
   * longest that reaches past its form's open start (0: none).
   */
  private ends(text: string, end: number): { longest: number; over: number } {
    let longest = 0;
    let over = 0;
    const last = text.charCodeAt(end - 1);
    if (!(last < 128 ? this.inKeys[last] : this.wide)) return { longest, over };
    for (const { text: form, open } of this.forms) {
      // The first start found is the longest of this form's.
      for (let at = text.indexOf(form[0]!, Math.max(0, end - form.length + 1)); at >= 0 && at < end; at = text.indexOf(form[0]!, at + 1)) {
        if (!startsAt(text, at, end, form)) continue;
        longest = Math.max(longest, end - at);
        if (end - at > open) over = Math.max(over, end - at);
        break;
      }
    }
    return { longest, over };
  }
}

import type { Candidate } from './candidates.js';
import { contentOf, moreThanContent, stringEnd, stringText } from './hang-up.js';

type Body = Record<string, unknown>;

/**
 * Whether `at` in an object's JSON text is in the object itself: one brace deep, outside strings. A
 * scan of the text before it (short: OpenAI's members come first; llama.cpp's `choices` is before them).
 */
export function topLevel(data: string, at: number): boolean {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    const c = data.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(data, i + 1);
      if (i < 0 || i >= at) return false;
    } else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return depth === 1;
}

/**
 * A chunk's text under the gateway's model, provider and id, without parsing it, when it is a plain one
 * like the first (the same upstream `model`, `provider` and `id` members once each, no usage, no error);
 * undefined when it must be parsed. Most of a stream's chunks are plain: one parse and one
 * stringify less for each.
 */
function relabeller(first: Body, c: Candidate, id: string): (data: string) => string | undefined {
  const member = (name: string, value: unknown) => (typeof value === 'string' ? `"${name}":${JSON.stringify(value)}` : undefined);
  const model = member('model', first.model);
  const provider = member('provider', first.provider);
  const upstreamId = member('id', first.id);
  const modelTo = member('model', c.model.id)!;
  const providerTo = member('provider', c.slug)!;
  const idTo = member('id', id)!;
  /** Where `text` is in `data`, when it is there once and a member of the chunk itself (not of an object in it). */
  const once = (data: string, text: string) => {
    const at = data.indexOf(text);
    return at >= 0 && data.indexOf(text, at + text.length) < 0 && topLevel(data, at) ? at : -1;
  };
  return (data) => {
    // Parsed as before: the chunk that ends the answer (its finish_reason is kept), usage, an error, a
    // tool call, reasoning or images (their tokens are counted for a hang-up), reasoning_content beside
    // text (renamed: serviceReasoning), anything unusual.
    if (!model || data.charCodeAt(0) !== 123 /* { */ || data.charCodeAt(data.length - 1) !== 125 /* } */ || data.includes('"usage"') || data.includes('"error"') || !data.includes('"finish_reason":null') || moreThanContent(data) || data.includes('"reasoning_content"')) return undefined;
    const at = once(data, model);
    if (at < 0) return undefined;
    // Members the first chunk had are replaced where they are; one it had not (`provider`, `id`) is added at the end.
    const swaps: [number, string, string][] = [[at, model, modelTo]];
    let added = '';
    for (const [name, was, to] of [['"provider"', provider, providerTo], ['"id"', upstreamId, idTo]] as const) {
      if (!was) {
        if (data.includes(name)) return undefined;
        added += `,${to}`;
        continue;
      }
      const where = once(data, was);
      if (where < 0) return undefined;
      swaps.push([where, was, to]);
    }
    // In place, by where each is (at most three: Array.prototype.sort made a work copy and its state, per stream).
    for (let i = 1; i < swaps.length; i++) {
      for (let j = i; j > 0 && swaps[j - 1]![0] > swaps[j]![0]; j--) {
        const later = swaps[j - 1]!;
        swaps[j - 1] = swaps[j]!;
        swaps[j] = later;
      }
    }
    // Built once from slices of `data`: a search in a string built by concatenation copied it whole first.
    let out = '';
    let from = 0;
    for (const [where, was, to] of swaps) {
      out += `${data.slice(from, where)}${to}`;
      from = where + was.length;
    }
    return added ? `${out}${data.slice(from, -1)}${added}}` : `${out}${data.slice(from)}`;
  };
}

const CONTENT = '"content":"';
/** Content strings this long or longer are copied as bytes, not encoded again (frameBytesTo). */
const COPIED = 256;

/** Where frameBytesTo puts a frame: its bytes copied, text encoded (Outgoing). */
export interface BytesOut {
  add(text: string): void;
  addBytes(from: Buffer, start: number, end: number): void;
}

/**
 * The frames of plain chunks (relabeller), the last one found plain kept as a pattern: its text before
 * its content string, and after it. A chunk that is that text but for its content string is as plain
 * (a JSON string can hold no member, no usage, no end) and is framed from two slices: two comparisons,
 * where relabeller's seven searches (each a scan of the chunk, from every quote) were 3.6% of the
 * gateway's CPU for a stream of short chunks (perf, on-CPU samples).
 */
export class PlainFrames {
  /** The content of the last chunk framed (its escapes undone): the tokens it carries. */
  content = '';
  private head = '';
  private tail = '';
  private headTo = '';
  private tailTo = '';
  /** The pattern's two ends as UTF-8, for a chunk still in the bytes it came in (frameBytesTo). */
  private headBytes: Buffer | undefined;
  private tailBytes: Buffer | undefined;
  /** The frame's two ends as UTF-8 (frameBytesTo copies them: no encoding a chunk). */
  private headToBytes: Buffer | undefined;
  private tailToBytes: Buffer | undefined;

  private readonly relabel: (data: string) => string | undefined;
  /**
   * Whether a plain chunk's content may go out as it came, as choice 0's content's next text (text-scrub.ts;
   * it keeps what that text ends with when it may); a chunk whose content may not is parsed. With it, a chunk
   * with any other text (another choice's, reasoning, a refusal, a tool call) is parsed too, and so is one whose
   * `data` (given when it is not the pattern's but for its content) holds a key elsewhere (its id, its fingerprint).
   */
  clean: ((content: string, data?: string) => boolean) | undefined;

  /** `first`: the stream's first chunk, parsed; `id`: the caller's id for every chunk. */
  constructor(first: Body, c: Candidate, id: string) {
    this.relabel = relabeller(first, c, id);
  }

  /** A plain chunk's `data: …` frame under the gateway's model and provider; undefined when it must be parsed. */
  frame(data: string): string | undefined {
    let frame = '';
    return this.frameTo(data, (text) => (frame += text)) ? frame : undefined;
  }

  /**
   * A plain chunk's frame given to `add` in pieces (false, nothing given, when it must be parsed): the
   * pattern's two ends and a slice of `data`, never joined into a string of their own (written to the
   * caller's bytes as they are, where a joined frame was copied once more, flat, when written).
   */
  frameTo(data: string, add: (text: string) => void): boolean {
    const head = this.head;
    // The head compared as a slice: startsWith took ten times as long (a loop over the characters). The
    // tail with endsWith, as fast as a slice's comparison and no string made (~33 bytes a chunk).
    if (head && data.slice(0, head.length) === head) {
      const end = stringEnd(data, head.length);
      if (end >= 0 && data.length - end === this.tail.length && data.endsWith(this.tail)) {
        this.content = stringText(data, head.length, end);
        if (this.clean && !this.clean(this.content)) return false;
        add(this.headTo);
        add(data.slice(head.length, end));
        add(this.tailTo);
        return true;
      }
    }
    const plain = this.clean && !contentAlone(data) ? undefined : this.relabel(data);
    if (plain === undefined) return false;
    this.content = contentOf(data);
    if (this.clean && !this.clean(this.content, data)) return false;
    this.learn(data, plain);
    add('data: ');
    add(plain);
    add('\n\n');
    return true;
  }

  /**
   * frameTo() of a chunk still in the bytes of its network read (`piece[start..end)`), when it is the
   * pattern but for its content string: compared as bytes, only that string decoded (to the same text
   * frameTo wrote from the chunk decoded whole), for its tokens. The frame is copied to `out` as bytes:
   * the frame's two ends made once, the content string's bytes as they came (UTF-8 both ways: the same
   * bytes frameTo's text became; encoding the three pieces again was ~30% of a framed chunk's time).
   * False when it is not: it is then decoded and given to frameTo.
   */
  frameBytesTo(piece: Buffer, start: number, end: number, out: BytesOut): boolean {
    const quote = this.contentEnd(piece, start, end);
    if (quote < 0) return false;
    const from = start + this.headBytes!.length;
    const raw = piece.toString('utf8', from, quote);
    this.content = stringText(raw, 0, -1);
    if (this.clean && !this.clean(this.content)) return false;
    const headTo = this.headToBytes!;
    const tailTo = this.tailToBytes!;
    out.addBytes(headTo, 0, headTo.length);
    // A short content string encoded again from its text: a copy of part of a Buffer makes a Uint8Array
    // over it (node 20's Buffer#copy), ~90 bytes a chunk. Bytes that are not UTF-8 go out as their
    // decoding (U+FFFD), as frameTo writes them.
    if (raw.length < COPIED || raw.includes('\uFFFD')) out.add(raw);
    else out.addBytes(piece, from, quote);
    out.addBytes(tailTo, 0, tailTo.length);
    return true;
  }

  /** Where the content string of a chunk that is the pattern but for it ends (its quote); -1 when it is not. */
  private contentEnd(piece: Buffer, start: number, end: number): number {
    const head = this.headBytes;
    const tail = this.tailBytes!;
    if (!head || end - start < head.length + tail.length || !same(piece, start, head)) return -1;
    const quote = bytesStringEnd(piece, start + head.length, end);
    return quote >= 0 && end - quote === tail.length && same(piece, quote, tail) ? quote : -1;
  }

  /** Keeps a plain chunk as the pattern: relabelling left its content string as it was (no member is in a string). */
  private learn(data: string, plain: string): void {
    const at = data.indexOf(CONTENT);
    const to = plain.indexOf(CONTENT);
    const start = at + CONTENT.length;
    const end = at < 0 || to < 0 ? -1 : stringEnd(data, start);
    if (end < 0 || plain.slice(to + CONTENT.length, to + CONTENT.length + end - start) !== data.slice(start, end)) {
      this.head = '';
      this.headBytes = undefined;
      return;
    }
    // Copies (a slice of a string made from another is flat and its own), not slices of `data`: those
    // would hold the whole network read it came in for as long as the stream lasts.
    this.head = ` ${data.slice(0, start)}`.slice(1);
    this.tail = ` ${data.slice(end)}`.slice(1);
    this.headTo = `data: ${plain.slice(0, to + CONTENT.length)}`;
    this.tailTo = `${plain.slice(to + CONTENT.length + end - start)}\n\n`;
    this.headBytes = Buffer.from(this.head);
    this.tailBytes = Buffer.from(this.tail);
    this.headToBytes = Buffer.from(this.headTo);
    this.tailToBytes = Buffer.from(this.tailTo);
  }
}

/**
 * The members a plain chunk may have under a key scrub: any other (reasoning, reasoning_details, a refusal,
 * a tool call, annotations, images, audio, one not yet named) may hold text, and the chunk is parsed.
 */
const PLAIN_MEMBERS = new Set(['id', 'object', 'created', 'model', 'provider', 'system_fingerprint', 'service_tier', 'choices', 'index', 'delta', 'role', 'content', 'finish_reason', 'native_finish_reason', 'logprobs']);

/**
 * Whether a chunk's only text is its one choice's content, choice 0's: a string holds no `"` (these are
 * members) and only the content string holds a `\` (a member's name written with escapes is parsed), and
 * every member outside the content string is one of PLAIN_MEMBERS.
 */
function contentAlone(data: string): boolean {
  const at = data.indexOf('"index"');
  const content = data.indexOf(CONTENT);
  const end = content < 0 ? -1 : stringEnd(data, content + CONTENT.length);
  if (at < 0 || !data.startsWith('"index":0', at) || !/[,}\s]/.test(data.charAt(at + 9)) || data.indexOf('"index"', at + 1) >= 0) return false;
  if (end < 0 || data.indexOf('"content"', content + 1) >= 0) return false;
  const slash = data.indexOf('\\');
  if (slash >= 0 && (slash < content || data.lastIndexOf('\\') >= end)) return false;
  return onlyPlainMembers(data.slice(0, content)) && onlyPlainMembers(data.slice(end + 1));
}

/** Whether each member named in `json` (a chunk's text outside its content string, no escapes) is one of PLAIN_MEMBERS. */
function onlyPlainMembers(json: string): boolean {
  for (const [, name] of json.matchAll(/"([^"]*)"\s*:/g)) if (!PLAIN_MEMBERS.has(name!)) return false;
  return true;
}

/** Whether `piece` holds `bytes` at `at` (a native comparison: a loop over the bytes was ~15% of a framed chunk's time). */
function same(piece: Buffer, at: number, bytes: Buffer): boolean {
  return at + bytes.length <= piece.length && piece.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0;
}

/** stringEnd() in UTF-8 bytes, before `end`: a character's bytes past the first are never a quote or a backslash. */
function bytesStringEnd(piece: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const c = piece[i];
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) return i;
  }
  return -1;
}

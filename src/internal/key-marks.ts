/**
 * A key's mark: what a profile keeps of a key it keeps in the keychain, so that the key can be known in a text without
 * reading the keychain (its native module, a D-Bus call, maybe a password prompt): its length, its kind (`sk-or-v1-`,
 * which every key of its kind starts with) and a salted SHA-256 of it. A text's candidates (its runs of a key's length
 * starting at the kind, or from a word's start to a word's end when the key has none) are hashed; one that matches is the key.
 * Written `sha256:LENGTH:KIND:SALT:HASH`. The key's 128+ random bits make the hash no help in guessing it.
 */
import { keyKind, leadingKind } from './hide-secrets.js';

export interface KeyMark {
  length: number;
  kind: string;
  salt: string;
  hash: string;
}

const FORM = /^sha256:(\d{1,4}):([a-z0-9_-]{0,64}):([0-9a-f]{32}):([0-9a-f]{64})$/;

/** The shortest key a mark is made for (shorter ones are not hidden: hideable). */
const LEAST = 8;

/** node:crypto, loaded when a mark is made or checked: a run with no mark (a one-shot chat) never loads it (~2.5 ms). */
const crypto = () => process.getBuiltinModule('node:crypto');

const digest = (salt: string, text: string) => crypto().createHash('sha256').update(salt).update(text).digest('hex');

/** A key's mark, as a profile keeps it; undefined for a key no mark can find (under 8 characters, or holding a space or a control character). */
export function makeKeyMark(key: string): string | undefined {
  if (key.length < LEAST || !/^[\x21-\x7e]+$/.test(key)) return undefined;
  const salt = crypto().randomBytes(16).toString('hex');
  const kind = keyKind(key);
  return `sha256:${key.length}:${kind.length < key.length ? kind : ''}:${salt}:${digest(salt, key)}`;
}

/**
 * A mark as read from a profile; undefined for anything else (a hand-edited field). Its kind is taken anew from the one
 * written (leadingKind): an older router wrote a key's first words (`sk-proj-ab3_`, of which `ab3_` is the key's).
 */
export function readKeyMark(text: unknown): KeyMark | undefined {
  const m = typeof text === 'string' ? FORM.exec(text) : null;
  if (!m || Number(m[1]) < LEAST || m[2]!.length >= Number(m[1])) return undefined;
  return { length: Number(m[1]), kind: leadingKind(m[2]!), salt: m[3]!, hash: m[4]! };
}

/** Whether `text` is a mark written with the kind readKeyMark() takes from it (not an older router's, longer). */
export const markKindKept = (text: unknown, mark: KeyMark): boolean => typeof text === 'string' && text.split(':')[2] === mark.kind;

/** Whether `key` is the key `mark` was made of. */
export const marks = (mark: KeyMark, key: string): boolean => key.length === mark.length && key.startsWith(mark.kind) && digest(mark.salt, key) === mark.hash;

const WORD_CHAR = /[A-Za-z0-9]/;

/** Where in `text` a key of `mark` could start: at each of its kind, or (a key of no kind) at each word's start in a run of printable characters long enough. */
function* starts(text: string, mark: KeyMark): Generator<number> {
  const { kind, length } = mark;
  if (kind) {
    for (let at = text.indexOf(kind); at >= 0 && at + length <= text.length; at = text.indexOf(kind, at + 1)) yield at;
    return;
  }
  // A word's start, and a word's end a key's length after it (a base64 run, glued, is not hashed at each `+` and `/`).
  let run = 0;
  for (let i = 0; i <= text.length - length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) {
      run = i + 1;
      continue;
    }
    if ((i === run || !WORD_CHAR.test(text[i - 1]!)) && !WORD_CHAR.test(text[i + length] ?? ' ')) yield i;
  }
}

/** The keys of `marks` found whole in `text` (each once). */
export function markedKeysIn(text: string, list: readonly KeyMark[]): string[] {
  const found = new Set<string>();
  for (const mark of list) {
    for (const at of starts(text, mark)) {
      const candidate = text.slice(at, at + mark.length);
      if (/^[\x21-\x7e]+$/.test(candidate) && !found.has(candidate) && marks(mark, candidate)) found.add(candidate);
    }
  }
  return [...found];
}

/**
 * How many characters at the end of `text` may begin a key of `marks` (held back until the next piece of a stream says):
 * from a start of the kind with fewer than a key's characters after it, none of them a space; a key of no kind, the
 * last word of printable characters shorter than the key.
 */
export function markedStart(text: string, list: readonly KeyMark[]): number {
  let most = 0;
  for (const { kind, length } of list) {
    const tail = text.slice(Math.max(0, text.length - (length - 1)));
    const from = tail.search(/[\x21-\x7e]*$/);
    const word = tail.slice(from);
    if (!kind) {
      most = Math.max(most, word.length);
      continue;
    }
    for (let i = 0; i < word.length; i++) {
      const rest = word.slice(i);
      if (rest.startsWith(kind) || kind.startsWith(rest)) {
        most = Math.max(most, rest.length);
        break;
      }
    }
  }
  return most;
}

/** Marks to look for in a text, and what is done with a key one finds (`found`: it becomes a secret of the run). */
export class MarkedKeys {
  readonly marks: KeyMark[] = [];

  constructor(private readonly found: (key: string) => void) {}

  add(list: readonly KeyMark[]): void {
    for (const m of list) if (!this.marks.some((x) => x.hash === m.hash)) this.marks.push(m);
  }

  /** Finds the marked keys `text` holds whole and gives each to `found`. */
  learn(text: string): void {
    if (this.marks.length) for (const key of markedKeysIn(text, this.marks)) this.found(key);
  }
}

import { hideSecrets, redactText, redactValue } from './hide-secrets.js';
import { markedStart, type MarkedKeys } from './key-marks.js';

/** How many characters at the end of `text` begin some secret (held back until the next piece says). */
function secretStart(text: string, secrets: readonly string[]): number {
  let most = 0;
  for (const s of secrets) {
    for (let n = Math.min(s.length - 1, text.length); n > most; n--) {
      if (text.charCodeAt(text.length - n) === s.charCodeAt(0) && text.endsWith(s.slice(0, n))) {
        most = n;
        break;
      }
    }
  }
  return most;
}

/**
 * Redacts text that comes in pieces (a streamed answer), a secret split across two pieces too: only a
 * piece's end that could begin a secret is held back, until the next piece (or the end) says whether it does.
 */
export class TextRedactor {
  private held = '';

  /** `marked`: keys kept in the keychain, known by their marks (found whole, they join `secrets`, its array). */
  constructor(
    private readonly secrets: readonly string[],
    private readonly marked?: MarkedKeys,
  ) {}

  /** What of `piece` (and what was held) can be shown now. */
  push(piece: string): string {
    if (!this.secrets.length && !this.marked?.marks.length) return piece;
    this.marked?.learn(this.held + piece);
    const all = redactText(this.held + piece, this.secrets);
    const keep = Math.max(secretStart(all, this.secrets), this.marked ? markedStart(all, this.marked.marks) : 0);
    this.held = all.slice(all.length - keep);
    // What is let go is no longer the start of a whole key: a start of one it holds is hidden as a cut quote's.
    return hideSecrets(all.slice(0, all.length - keep), this.secrets);
  }

  /** Whether an end of what came is held back (it may begin a secret). */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** What is left at the end (the start of a secret that never came whole). */
  end(): string {
    const rest = this.held;
    this.held = '';
    this.marked?.learn(rest);
    return hideSecrets(rest, this.secrets);
  }
}

/** Pieces of text with the secrets redacted (see TextRedactor). */
export async function* redactedPieces(pieces: AsyncIterable<string>, secrets: readonly string[], marked?: MarkedKeys): AsyncGenerator<string> {
  const hide = new TextRedactor(secrets, marked);
  for await (const piece of pieces) yield hide.push(piece);
  yield hide.end();
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text fields of a chat chunk's delta that a model's words stream in. */
const DELTA_TEXT = ['content', 'reasoning', 'refusal'] as const;

/**
 * Redacts streamed chat chunks printed one JSON line each (`chat --json`), a secret split across two chunks' text
 * too: the end of a choice's text that could begin a secret is moved to that choice's next chunk (the one with its
 * finish_reason takes all that is left), so no more than a secret's length waits. The rest of a chunk is hidden whole.
 */
export class ChunkRedactor {
  private readonly held = new Map<string, TextRedactor>();
  private last: Rec = {};

  constructor(
    private readonly secrets: readonly string[],
    private readonly marked?: MarkedKeys,
  ) {}

  push<T>(chunk: T): T {
    if ((!this.secrets.length && !this.marked?.marks.length) || !isRec(chunk)) return chunk;
    this.last = chunk;
    // A marked key in the chunk's other fields (its text is the TextRedactors' to find, one split across chunks too).
    if (this.marked?.marks.length) this.marked.learn(JSON.stringify({ ...chunk, choices: undefined }));
    const choices = Array.isArray(chunk.choices) ? chunk.choices.map((c: unknown) => this.choice(c)) : chunk.choices;
    return redactValue({ ...chunk, choices }, this.secrets) as T;
  }

  /** Chunks (none, mostly) carrying what is still held when the stream ended before a choice's finish_reason. */
  end(): Rec[] {
    const left = [...this.held].map(([key, r]) => [key.split(':'), r.end()] as const).filter(([, text]) => text);
    this.held.clear();
    const { id, object, created, model } = this.last;
    return left.map(([[index, field], text]) => ({ id, object, created, model, choices: [{ index: Number(index), delta: { [field!]: text }, finish_reason: null }] }));
  }

  private choice(c: unknown): unknown {
    if (!isRec(c) || !isRec(c.delta)) return c;
    const delta: Rec = { ...c.delta };
    const last = c.finish_reason !== null && c.finish_reason !== undefined;
    for (const field of DELTA_TEXT) {
      const key = `${typeof c.index === 'number' ? c.index : 0}:${field}`;
      const text = typeof delta[field] === 'string' ? (delta[field] as string) : undefined;
      let hide = this.held.get(key);
      if (text === undefined && !(last && hide)) continue;
      if (!hide) this.held.set(key, (hide = new TextRedactor(this.secrets, this.marked)));
      let shown = text === undefined ? '' : hide.push(text);
      if (last) {
        shown += hide.end();
        this.held.delete(key);
      }
      if (text !== undefined || shown) delta[field] = shown;
    }
    return { ...c, delta };
  }
}

import { hideSecrets, redactText } from './hide-secrets.js';

/** A value to print as JSON, with any secret in its strings redacted (an answer that says a key back). */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.length) return value;
  const text = JSON.stringify(value);
  const shown = hideSecrets(text, secrets);
  return shown === text ? value : (JSON.parse(shown) as T);
}

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

  constructor(private readonly secrets: readonly string[]) {}

  /** What of `piece` (and what was held) can be shown now. */
  push(piece: string): string {
    if (!this.secrets.length) return piece;
    const all = redactText(this.held + piece, this.secrets);
    const keep = secretStart(all, this.secrets);
    this.held = all.slice(all.length - keep);
    // What is let go is no longer the start of a whole key: a start of one it holds is hidden as a cut quote's.
    return hideSecrets(all.slice(0, all.length - keep), this.secrets);
  }

  /** What is left at the end (the start of a secret that never came whole). */
  end(): string {
    const rest = this.held;
    this.held = '';
    return hideSecrets(rest, this.secrets);
  }
}

/** Pieces of text with the secrets redacted (see TextRedactor). */
export async function* redactedPieces(pieces: AsyncIterable<string>, secrets: readonly string[]): AsyncGenerator<string> {
  const hide = new TextRedactor(secrets);
  for await (const piece of pieces) yield hide.push(piece);
  yield hide.end();
}

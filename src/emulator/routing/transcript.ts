import { CONTENT_BYTES } from '../resources/generation-content.js';

/** An answer's text as generation content keeps it; undefined when it is too large to keep. */
export interface AnswerText {
  text(): { completion: string; reasoning: string | null } | undefined;
}

/**
 * Text gathered piece by piece into one buffer, as UTF-16 code units (a surrogate pair split across
 * two pieces joins again), made a string once at the end. A string per piece in an array was what a
 * stream kept alive for every young collection to copy while it lasted; copied bytes also keep no
 * network read alive, as a slice of an event's text would.
 */
class GatheredText {
  private bytes: Buffer | undefined;
  private used = 0;

  add(text: string): void {
    const need = this.used + 2 * text.length;
    if (!this.bytes || need > this.bytes.length) {
      // Never past what CONTENT_BYTES characters take (push adds nothing beyond them).
      const grown = Buffer.allocUnsafe(Math.max(256, Math.min(2 * need, 2 * CONTENT_BYTES)));
      this.bytes?.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.used += this.bytes.write(text, this.used, 'utf16le');
  }

  get empty(): boolean {
    return this.used === 0;
  }

  /** Room held for text: what the gathering costs. */
  get capacity(): number {
    return this.bytes?.length ?? 0;
  }

  toString(): string {
    return this.bytes ? this.bytes.toString('utf16le', 0, this.used) : '';
  }
}

/**
 * The text a relayed stream carried, for `GET /v1/generation/content`: its content and its reasoning,
 * gathered as they pass, at most CONTENT_BYTES of them (more would not be stored: nothing is kept then).
 */
export class Transcript implements AnswerText {
  private readonly said = new GatheredText();
  private thought: GatheredText | undefined;
  private size = 0;

  add(delta: unknown): void {
    if (!delta || typeof delta !== 'object' || this.size > CONTENT_BYTES) return;
    const { content, reasoning } = delta as { content?: unknown; reasoning?: unknown };
    if (typeof content === 'string' && content) this.push(this.said, content);
    if (typeof reasoning === 'string' && reasoning) this.push((this.thought ??= new GatheredText()), reasoning);
  }

  /** Content the relay's fast path took from a plain chunk. */
  addContent(content: string): void {
    if (content && this.size <= CONTENT_BYTES) this.push(this.said, content);
  }

  /** The text gathered; undefined when it grew past what is stored. */
  text(): { completion: string; reasoning: string | null } | undefined {
    if (this.size > CONTENT_BYTES) return undefined;
    return { completion: this.said.toString(), reasoning: this.thought && !this.thought.empty ? this.thought.toString() : null };
  }

  /** Bytes held for the text gathered so far. */
  get held(): number {
    return this.said.capacity + (this.thought?.capacity ?? 0);
  }

  private push(to: GatheredText, text: string): void {
    this.size += text.length;
    if (this.size <= CONTENT_BYTES) to.add(text);
  }
}

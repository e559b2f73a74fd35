import { CONTENT_BYTES } from '../resources/generation-content.js';

/** An answer's text as generation content keeps it; undefined when it is too large to keep. */
export interface AnswerText {
  text(): { completion: string; reasoning: string | null } | undefined;
}

/**
 * The text a relayed stream carried, for `GET /v1/generation/content`: its content and its reasoning,
 * gathered as they pass, at most CONTENT_BYTES of them (more would not be stored: nothing is kept then).
 */
export class Transcript implements AnswerText {
  private readonly said: string[] = [];
  private readonly thought: string[] = [];
  private size = 0;

  add(delta: unknown): void {
    if (!delta || typeof delta !== 'object' || this.size > CONTENT_BYTES) return;
    const { content, reasoning } = delta as { content?: unknown; reasoning?: unknown };
    if (typeof content === 'string' && content) this.push(this.said, content);
    if (typeof reasoning === 'string' && reasoning) this.push(this.thought, reasoning);
  }

  /** Content the relay's fast path took from a plain chunk. */
  addContent(content: string): void {
    if (content && this.size <= CONTENT_BYTES) this.push(this.said, content);
  }

  /** The text gathered; undefined when it grew past what is stored. */
  text(): { completion: string; reasoning: string | null } | undefined {
    if (this.size > CONTENT_BYTES) return undefined;
    return { completion: this.said.join(''), reasoning: this.thought.length ? this.thought.join('') : null };
  }

  private push(to: string[], text: string): void {
    // A copy: content the relay sliced from an event (13 characters or more) would keep the whole
    // network read it came in alive, so a stream of large events held them all while it lasted.
    to.push(text.length < 13 ? text : ` ${text}`.slice(1));
    this.size += text.length;
  }
}

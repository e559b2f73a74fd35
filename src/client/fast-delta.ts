import type { ChatChunk } from './types.js';

const CONTENT = '"content":"';

/** Where the content string literal of a chunk starts and ends (quotes included), or undefined. */
function contentLiteral(data: string): [number, number] | undefined {
  const at = data.indexOf(CONTENT);
  if (at === -1) return undefined;
  const start = at + CONTENT.length - 1;
  let end = data.indexOf('"', start + 1);
  for (let bs = data.indexOf('\\', start + 1); bs !== -1 && end !== -1 && bs < end; bs = data.indexOf('\\', bs + 2)) {
    if (bs + 1 === end) end = data.indexOf('"', end + 1);
  }
  return end === -1 ? undefined : [start, end + 1];
}

/** A chunk that holds nothing but one choice's text: no usage, error, metadata, tools or finish. */
function isPlainText(c: ChatChunk): boolean {
  if (c.usage || c.error || c.router_metadata || c.choices?.length !== 1) return false;
  const [choice] = c.choices;
  if (choice!.finish_reason !== null || (choice!.logprobs ?? null) !== null) return false;
  const keys = Object.keys(choice!.delta);
  return typeof choice!.delta.content === 'string' && keys.every((k) => k === 'content' || k === 'role');
}

/**
 * Reads the text of chat chunks without parsing each one (JSON.parse of every chunk is most of a
 * stream's CPU). A chunk is parsed in full and checked to be plain text; after that, a chunk whose
 * text is all that differs from it (the same "skeleton", compared as one string) is read by slicing
 * out its text. Anything else is parsed in full. Property-tested against JSON.parse.
 */
export class TextDeltaReader {
  private skeleton: string | undefined;

  /** The chunk's text when it is a plain text chunk like the last one checked; else undefined. */
  fast(data: string): string | undefined {
    const span = contentLiteral(data);
    if (!span) return undefined;
    const skeleton = data.slice(0, span[0]) + data.slice(span[1]);
    if (skeleton !== this.skeleton) return undefined;
    const literal = data.slice(span[0], span[1]);
    return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
  }

  /** After a full parse: remember the chunk's shape if it is plain text, for the chunks that follow. */
  learn(data: string, chunk: ChatChunk): void {
    if (!isPlainText(chunk)) return;
    const span = contentLiteral(data);
    // The literal found must be the delta's content itself, or the shape cannot be trusted.
    if (!span || JSON.parse(data.slice(span[0], span[1])) !== chunk.choices[0]!.delta.content) return;
    this.skeleton = data.slice(0, span[0]) + data.slice(span[1]);
  }
}

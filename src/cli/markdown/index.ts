/** An answer on a terminal, rendered as Markdown as it arrives (loaded only for a terminal). */
import type { IO } from '../io.js';
import { renderBlocks } from './render.js';
import { MarkdownStream } from './stream.js';

/** A stream renderer at the terminal's width and colors, the width read again for each block (resizes). */
export function terminalMarkdown(io: IO): MarkdownStream {
  return new MarkdownStream((src) => renderBlocks(src, { width: io.columns ?? 80, color: io.color }));
}

/** Pieces of text in, rendered text out; what arrived is rendered even when the stream fails. */
export async function* renderPieces(io: IO, pieces: AsyncIterable<string>): AsyncGenerator<string> {
  const md = terminalMarkdown(io);
  try {
    for await (const piece of pieces) {
      const out = md.push(piece);
      if (out) yield out;
    }
  } finally {
    const rest = md.end();
    if (rest) yield rest;
  }
}

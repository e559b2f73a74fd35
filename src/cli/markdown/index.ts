/** An answer on a terminal, rendered as Markdown as it arrives (loaded only for a terminal). */
import { renderBlocks } from './render.js';
import { MarkdownStream } from './stream.js';
import { PROSE, visible } from '../../internal/visible.js';

/** What the renderer needs of the terminal (`IO` of src/cli/io has it: markdown imports nothing of io). */
export interface Terminal {
  readonly columns?: number;
  readonly color: boolean;
  readonly interrupt?: AbortSignal;
}

/**
 * A stream renderer at the terminal's width and colors, the width read again for each block (resizes).
 * The model's control characters are shown escaped: its text (maybe from a web page it read) must not
 * retitle the window, clear the screen or overwrite a line. Line ends (a CR before one is dropped) and tabs stay.
 */
export function terminalMarkdown(io: Terminal): MarkdownStream {
  return new MarkdownStream((src) => renderBlocks(visible(src.replace(/\r(\n|$)/g, '$1'), PROSE), { width: io.columns ?? 80, color: io.color }));
}

/**
 * Pieces of text in, rendered text out; what arrived is rendered even when the stream fails. Ctrl-C
 * while rendering ends it (exit 130): pieces already received come without a wait for the network,
 * so the signal is given a turn now and then.
 */
export async function* renderPieces(io: Terminal, pieces: AsyncIterable<string>): AsyncGenerator<string> {
  const md = terminalMarkdown(io);
  let turn = Date.now();
  const heard = async () => {
    if (Date.now() - turn > 50) {
      await new Promise((r) => setImmediate(r));
      turn = Date.now();
    }
    if (io.interrupt?.aborted) throw io.interrupt.reason;
  };
  try {
    for await (const piece of pieces) {
      const out = md.push(piece);
      await heard();
      if (out) yield out;
    }
  } finally {
    const rest = md.end();
    if (rest) yield rest;
  }
  turn = 0;
  await heard();
}

/** llm's `--extract`: of an answer, the code of its first (or last) fenced code block. */

/** A fence's opening line: its indent (a list item's block is indented), the fence, the info string. */
const OPENING = /^([ \t]*)(`{3,}|~{3,})([^`]*)$/;
const CLOSING = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

/** A block's code, ending with a newline; `open`: its fence was never closed (the answer ended inside it, as a cut one does). */
export interface FencedCode {
  code: string;
  open: boolean;
}

/**
 * The first or last fenced block of the text; undefined when it has none. Fences may be indented
 * (a block in a list item: its indent is taken off each line, as Markdown does); a fence still open
 * at the end is a block of what came.
 */
export function fencedCode(text: string, last = false): FencedCode | undefined {
  let found: FencedCode | undefined;
  let fence: { indent: number; mark: string; lines: string[] } | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!fence) {
      const m = OPENING.exec(line);
      if (m && !(m[2][0] === '~' && m[3].includes('~'))) fence = { indent: m[1].length, mark: m[2], lines: [] };
      continue;
    }
    const close = CLOSING.exec(line);
    if (close && close[1][0] === fence.mark[0] && close[1].length >= fence.mark.length) {
      found = { code: codeOf(fence.lines), open: false };
      fence = undefined;
      if (!last) return found;
      continue;
    }
    fence.lines.push(raw.slice(Math.min(fence.indent, raw.length - raw.trimStart().length)));
  }
  if (!fence) return found;
  if (fence.lines.at(-1) === '') fence.lines.pop();
  return { code: codeOf(fence.lines), open: true };
}

const codeOf = (lines: string[]): string => (lines.length ? `${lines.join('\n')}\n` : '');

/**
 * The streamed text held back until it is whole, then only its code block; an answer with none is
 * printed whole, as llm does; `said` tells stderr which (none, or a block left open).
 */
export async function* extractedPieces(pieces: AsyncIterable<string>, last: boolean, said: (block: FencedCode | undefined) => void): AsyncIterable<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  const block = fencedCode(text, last);
  if (text) said(block);
  yield block ? block.code : text;
}

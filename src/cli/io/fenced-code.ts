/** llm's `--extract`: of an answer, the code of its first (or last) fenced code block. */

/** A fence's opening line: its indent (a list item's block is indented), the fence, the info string. */
const OPENING = /^([ \t]*)(`{3,}|~{3,})([^`]*)$/;
const CLOSING = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;
/** One blockquote marker: up to 3 spaces, ">", and the one space after it that belongs to it. */
const QUOTE = /^ {0,3}> ?/;

/** A block's code, ending with a newline; `open`: its fence was never closed (the answer ended inside it, as a cut one does). */
export interface FencedCode {
  code: string;
  open: boolean;
}

/**
 * The first or last fenced block of the text; undefined when it has none. Fences may be indented
 * (a block in a list item: its indent is taken off each line, as Markdown does) or quoted (`> ```py`:
 * the markers are taken off, and the quote's end ends the block); a fence still open at the end is a
 * block of what came. Lines end with "\n" whatever the answer's did ("\r\n" would reach `| sh`).
 */
export function fencedCode(text: string, last = false): FencedCode | undefined {
  let found: FencedCode | undefined;
  let fence: { indent: number; mark: string; quotes: number; lines: string[] } | undefined;
  for (const raw of text.split('\n')) {
    const whole = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!fence) {
      const [quotes, line] = unquoted(whole, Infinity);
      const m = OPENING.exec(line);
      if (m && !(m[2][0] === '~' && m[3].includes('~'))) fence = { indent: m[1].length, mark: m[2], quotes, lines: [] };
      continue;
    }
    const [quotes, line] = unquoted(whole, fence.quotes);
    const close = CLOSING.exec(line);
    // A quoted block ends with its quote, as Markdown closes a block with its container.
    if (quotes < fence.quotes || (close && close[1][0] === fence.mark[0] && close[1].length >= fence.mark.length)) {
      found = { code: codeOf(fence.lines), open: false };
      fence = undefined;
      if (!last) return found;
      continue;
    }
    fence.lines.push(line.slice(Math.min(fence.indent, line.length - line.trimStart().length)));
  }
  if (!fence) return found;
  if (fence.lines.at(-1) === '') fence.lines.pop();
  return { code: codeOf(fence.lines), open: true };
}

/** The line's blockquote markers (at most `most` of them) counted and taken off. */
function unquoted(line: string, most: number): [number, string] {
  let quotes = 0;
  for (let m = QUOTE.exec(line); m && quotes < most; m = QUOTE.exec(line)) {
    line = line.slice(m[0].length);
    quotes++;
  }
  return [quotes, line];
}

const codeOf = (lines: string[]): string => (lines.length ? `${lines.join('\n')}\n` : '');

/**
 * The streamed text held back until it is whole, then only its code block; an answer with none is
 * printed whole, as llm does; `said` tells stderr which (none, or a block left open). `cut`: the answer
 * was cut at its length limit, known once it ended: a block it ended inside is not printed (`| sh` would
 * run part of it); the command then ends as `cutBlock` says.
 */
export async function* extractedPieces(pieces: AsyncIterable<string>, last: boolean, said: (block: FencedCode | undefined) => void, cut: () => boolean): AsyncIterable<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  const block = fencedCode(text, last);
  if (text) said(block);
  yield shownCode(text, block, cut());
}

/** What --extract prints of an answer: its block's code, none of a block a cut answer ended inside, the answer with no block. */
export function shownCode(text: string, block: FencedCode | undefined, cut: boolean): string {
  if (!block) return text;
  return block.open && cut ? '' : block.code;
}

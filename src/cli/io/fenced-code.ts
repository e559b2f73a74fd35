/** llm's `--extract`: of an answer, the code of its first (or last) fenced code block. */

const FENCE = /^(`{3,}|~{3,})[^\n`]*\n([\s\S]*?)^\1[`~]*[ \t]*$/gm;

/** The code of the first or last fenced block of the text, ending with a newline; undefined when it has none. */
export function fencedCode(text: string, last = false): string | undefined {
  let code: string | undefined;
  for (const m of text.matchAll(FENCE)) {
    code = m[2];
    if (!last) break;
  }
  return code;
}

/**
 * The streamed text held back until it is whole, then only its code block; an answer with none is
 * printed whole, as llm does, and `none` says so on stderr.
 */
export async function* extractedPieces(pieces: AsyncIterable<string>, last: boolean, none: () => void): AsyncIterable<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  const code = fencedCode(text, last);
  if (code === undefined && text) none();
  yield code ?? text;
}

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Kept by text of several lines (an answer, a log): line breaks, tabs, and the joiners Persian and Indic words are spelled with. */
export const PROSE = '\n\t\u200c\u200d';

const PICTURE = /\p{Extended_Pictographic}/u;
const ZWJ = 0x200d;

/** The code point that ends at `at` (a surrogate pair read whole). */
function before(text: string, at: number): number {
  const low = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && at > 1 ? text.codePointAt(at - 2)! : low;
}

/** A joiner inside an emoji (👨‍👩‍👧, 👍🏽‍🔥) or a tag of a flag (🏴 + tags): part of one picture, not hidden text. */
function inEmoji(text: string, at: number, c: string): boolean {
  let prev = before(text, at);
  if (c.codePointAt(0) !== ZWJ) return prev === 0x1f3f4 || (prev >= 0xe0020 && prev <= 0xe007f);
  // Past a presentation selector or a skin tone, to the picture they belong to.
  if (prev === 0xfe0f || (prev >= 0x1f3fb && prev <= 0x1f3ff)) prev = before(text, at - (prev > 0xffff ? 2 : 1));
  return PICTURE.test(String.fromCodePoint(prev || 0)) && PICTURE.test(String.fromCodePoint(text.codePointAt(at + 1) ?? 0));
}

/**
 * Text made safe to print on a terminal: control characters (C0, DEL, C1, which start escape
 * sequences that move the cursor, retitle the window or hide text) are shown escaped (`\u001b`),
 * except those in `keep` (`PROSE` for text of several lines); so are the invisible format characters
 * (Unicode Cf: a zero-width space, a soft hyphen, a byte-order mark), which a terminal and a table
 * measure differently and which hide what a name really is, and above all the bidirectional controls
 * (U+202A–U+202E, U+2066–U+2069), which reorder what is shown (a file `x\u202egpj.exe` reads as
 * `xexe.jpg`). A joiner inside an emoji and the tags of a flag are kept: they draw one picture.
 */
export function visible(text: string, keep = ''): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]|\p{Cf}/gu, (c, at: number) =>
    keep.includes(c) || inEmoji(text, at, c) ? c : (NAMED[c] ?? `\\u${c.length > 1 ? `{${c.codePointAt(0)!.toString(16)}}` : c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text made safe to print on a terminal: control characters (C0, DEL, C1, which start escape
 * sequences that move the cursor, retitle the window or hide text) are shown escaped (`\u001b`),
 * except those in `keep` (`'\n\t'` for text of several lines); so are the bidirectional controls
 * (U+202A–U+202E, U+2066–U+2069), which reorder what is shown (a file `x\u202egpj.exe` reads as `xexe.jpg`).
 */
export function visible(text: string, keep = ''): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => (keep.includes(c) ? c : (NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)));
}

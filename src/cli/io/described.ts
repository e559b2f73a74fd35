/**
 * The one rule of what router prints for people and for scripts: a list is `table()` (./table.ts), one thing
 * described is `described()`. On a terminal a table, or `name  value` lines with the names aligned;
 * piped, tab-separated fields with no header or padding, so `cut -f`, `awk -F'\t'` and `IFS=$'\t' read` split them.
 */
import type { IO } from './io.js';
import { textWidth } from '../markdown/runs.js';
import { visible } from '../../internal/visible.js';

type Fields = readonly (readonly [string, string | number])[];

/**
 * One thing's fields (a key, a generation, a batch, where the key in use comes from): on a terminal `name  value`
 * lines, the names aligned, as a table too wide for the terminal shows each row; piped, `name<TAB>value` lines.
 */
export function described(io: IO, fields: Fields): string {
  // Values are often a server's words: a tab or line break in one would split its line, an escape drive the terminal.
  const shown = fields.map(([k, v]) => [k, visible(String(v))] as const);
  return io.stdoutTTY ? aligned(shown, io.columns) : shown.map((f) => tabLine(f)).join('');
}

/**
 * `name  value` lines, the names padded to the longest, each value cut with "…" to the terminal's `columns` (a line
 * the terminal wrapped would run under the names); `paint`: a table's head color for its column names.
 */
export function aligned(fields: Fields, columns = Infinity, paint = (name: string) => name): string {
  const width = Math.max(...fields.map(([k]) => textWidth(k)));
  const room = Math.max(1, columns - width - 2);
  return fields.map(([k, v]) => `${paint(`${k}${' '.repeat(width - textWidth(k))}`)}  ${cut(String(v), room)}\n`).join('');
}

/**
 * `text` in at most `width` columns: cut between letters, with "…" (half an emoji is never shown). A file's path
 * (`/…`, one word) loses its start instead: its file name is what tells it apart.
 */
export function cut(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  if (/^[/~]\S*$/.test(text)) {
    const chars = [...text];
    let tail = '';
    while (chars.length && textWidth(chars.at(-1)! + tail) <= width - 1) tail = chars.pop()! + tail;
    return `…${tail}`;
  }
  let out = '';
  for (const ch of text) {
    // Measured with what comes before: a letter joined to an emoji (👨‍👩‍👧) takes no column of its own.
    if (textWidth(out + ch) > width - 1) break;
    out += ch;
  }
  return `${out}…`;
}

/**
 * One piped line of tab-separated fields: a tab, line break or escape in a field (often a server's or a user's words)
 * shown escaped (\t, \n, \u001b), so each line stays one record of as many fields as it names.
 */
export function tabLine(fields: readonly (string | number)[]): string {
  return `${fields.map((f) => visible(String(f))).join('\t')}\n`;
}

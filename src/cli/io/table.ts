import Table from 'cli-table3';
import type { IO } from './io.js';
import { aligned, tabLine } from './described.js';
import { textWidth } from '../markdown/runs.js';

/**
 * A human table on a terminal (color only when the IO allows it); off one, tab-separated lines
 * without the header, as every list prints when piped. `fit`: the column of free text (a title, a
 * path) cut with "…" so the table is no wider than the terminal, which would wrap each line in two.
 * A table still wider (a key's hash is 64 columns) is shown as psql's expanded display does: each row
 * a block of "column  value" lines, nothing cut.
 */
export function table(io: IO, head: string[], rows: (string | number)[][], fit?: number): string {
  if (!io.stdoutTTY) return rows.map((r) => tabLine(r)).join('');
  const make = (colWidths: (number | null)[] = []) => {
    const t = new Table({ head, colWidths, style: { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [] } });
    // Cut here, a letter at a time: cli-table3 cuts UTF-16 units, half an emoji shown as �. Keys hidden before the cut.
    for (const r of rows) t.push(r.map((c, i) => (i === fit && colWidths[i] ? cut(io.redact(String(c)), colWidths[i] - 2) : String(c))));
    return t.toString();
  };
  let text = make();
  // The top border gives each column's width: ┌──┬────┐, one character a cell's (a wide one counts two there too).
  const widthsOf = (t: string) => t.slice(0, t.indexOf('\n')).replace(/\x1b\[[\d;]*m/g, '').slice(1, -1).split('┬').map((s) => s.length);
  const overOf = (t: string) => widthsOf(t).reduce((a, b) => a + b + 1, 1) - (io.columns ?? 80);
  const widths = widthsOf(text);
  const over = overOf(text);
  if (fit !== undefined && over > 0 && widths[fit]! > FIT_MIN) {
    const colWidths: (number | null)[] = head.map(() => null);
    colWidths[fit] = Math.max(FIT_MIN, widths[fit]! - over);
    text = make(colWidths);
  }
  if (overOf(text) > 0) return expanded(io, head, rows);
  return `${text}\n`;
}

/** Each row as a block of "column  value" lines (the column names in the table's head color), a blank line between. */
function expanded(io: IO, head: string[], rows: (string | number)[][]): string {
  const paint = (name: string) => (io.color ? `\x1b[36m${name}\x1b[39m` : name);
  return rows.map((r) => aligned(r.map((c, i) => [head[i]!, c]), paint)).join('\n');
}

/** The narrowest a fitted column is cut to (its padding included): past that the table wraps as it must. */
const FIT_MIN = 12;

/** `text` in at most `width` columns: cut between letters, with "…". */
function cut(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  let w = 0;
  for (const ch of text) {
    w += textWidth(ch);
    if (w > width - 1) break;
    out += ch;
  }
  return `${out}…`;
}

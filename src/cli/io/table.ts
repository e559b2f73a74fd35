import type { IO } from './io.js';
import { aligned, tabLine } from './described.js';
import { textWidth } from '../markdown/runs.js';
import { visible } from '../../internal/visible.js';

/** How a table is drawn on a terminal. */
export interface TableShape {
  /** The column of free text (a title, a path) cut with "…" so the table is no wider than the terminal. */
  fit?: number;
  /** No borders, two spaces between columns (gh's style), for lists that run long (models, batches); a line still too wide is cut with "…". */
  bare?: boolean;
}

/**
 * The one table router prints. Off a terminal: tab-separated lines without the header, as every list
 * prints when piped. On one: columns padded by what the terminal shows (a wide letter two columns, a
 * combining mark none), each cell's control characters shown escaped (a server's `\x1b]0;…` would
 * retitle the window, a tab or line break tear the row) and keys hidden before any cut; color only
 * when the IO allows it. A boxed table still wider than the terminal (a key's hash is 64 columns) is
 * shown as psql's expanded display does: each row a block of "column  value" lines, nothing cut.
 */
export function table(io: IO, head: readonly string[], rows: readonly (readonly (string | number)[])[], shape: TableShape = {}): string {
  if (!io.stdoutTTY) return rows.map((r) => tabLine(r)).join('');
  const cells = rows.map((r) => r.map((c) => shownCell(io, c)));
  const names = head.map((h) => visible(h));
  const widths = names.map((h, i) => Math.max(textWidth(h), ...cells.map((r) => textWidth(r[i] ?? ''))));
  const columns = io.columns ?? 80;
  const drawn = (w: number[]) => (shape.bare ? w.reduce((a, b) => a + b, 0) + 2 * (w.length - 1) : w.reduce((a, b) => a + b + 3, 1));
  const { fit } = shape;
  const over = drawn(widths) - columns;
  const fitted = fit !== undefined && over > 0 && widths[fit]! > FIT_MIN ? Math.max(FIT_MIN, widths[fit]! - over) : undefined;
  if (!shape.bare && drawn(fitted === undefined ? widths : widths.map((w, i) => (i === fit ? fitted : w))) > columns) return expanded(io, names, cells);
  if (fitted !== undefined) {
    widths[fit!] = fitted;
    for (const r of cells) r[fit!] = cut(r[fit!]!, fitted);
  }
  return shape.bare ? bare(io, names, cells, widths, columns) : boxed(io, names, cells, widths);
}

/** A cell as shown on a terminal: keys hidden, control characters escaped. */
function shownCell(io: IO, cell: string | number): string {
  return visible(io.redact(String(cell)));
}

const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - textWidth(text)));

/** cli-table3's look: a box, a line between rows, the head in cyan and the borders grey. */
function boxed(io: IO, head: string[], rows: string[][], widths: number[]): string {
  const grey = (s: string) => (io.color ? `\x1b[90m${s}\x1b[39m` : s);
  const cyan = (s: string) => (io.color ? `\x1b[36m${s}\x1b[39m` : s);
  const rule = (left: string, mid: string, right: string) => grey(left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right);
  const row = (cells: string[], paint = (s: string) => s) => grey('│') + cells.map((c, i) => ` ${paint(pad(c, widths[i]!))} `).join(grey('│')) + grey('│');
  const between = rule('├', '┼', '┤');
  const lines = [rule('┌', '┬', '┐'), row(head, cyan), ...rows.flatMap((r) => [between, row(r)]), rule('└', '┴', '┘')];
  return `${lines.join('\n')}\n`;
}

/** gh's look: no borders, the head in bold, the last column unpadded; a line wider than the terminal cut with "…". */
function bare(io: IO, head: string[], rows: string[][], widths: number[], columns: number): string {
  const line = (cells: string[], bold = false) => {
    const text = cut(cells.map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!))).join('  '), columns);
    return bold && io.color ? `\x1b[1m${text}\x1b[22m` : text;
  };
  return [line(head, true), ...rows.map((r) => line(r))].join('\n') + '\n';
}

/** Each row as a block of "column  value" lines (the column names in the table's head color), a blank line between. */
function expanded(io: IO, head: string[], rows: string[][]): string {
  const paint = (name: string) => (io.color ? `\x1b[36m${name}\x1b[39m` : name);
  return rows.map((r) => aligned(r.map((c, i) => [head[i]!, c]), paint)).join('\n');
}

/** The narrowest a fitted column is cut to: past that the table is shown expanded (or, bare, its lines cut). */
const FIT_MIN = 10;

/** `text` in at most `width` columns: cut between letters, with "…" (half an emoji is never shown). */
export function cut(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  for (const ch of text) {
    // Measured with what comes before: a letter joined to an emoji (👨‍👩‍👧) takes no column of its own.
    if (textWidth(out + ch) > width - 1) break;
    out += ch;
  }
  return `${out}…`;
}

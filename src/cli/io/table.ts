import Table from 'cli-table3';
import type { IO } from './io.js';
import { aligned, cut, tabLine } from './described.js';

export { cut };
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
 * prints when piped. On one: drawn by cli-table3, each cell first made safe so that cli-table3's
 * measure (string-width) and the terminal's agree: control and invisible format characters shown
 * escaped (a server's `\x1b]0;…` would retitle the window, a tab tear the row, a zero-width space
 * count one column in the table and none on screen, a bidi override reverse what follows it), and
 * keys hidden before any cut; cut and fitted by textWidth (a wide letter two columns, a combining
 * mark or skin tone none); color only when the IO allows it. A boxed table still wider than the terminal (a key's hash is 64 columns) is
 * shown as psql's expanded display does: each row a block of "column  value" lines, a value past the line cut with "…".
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
  if (!shape.bare && drawn(fitted === undefined ? widths : widths.map((w, i) => (i === fit ? fitted : w))) > columns) return expanded(io, names, cells, columns);
  if (fitted !== undefined) {
    widths[fit!] = fitted;
    for (const r of cells) r[fit!] = cut(r[fit!]!, fitted);
  }
  return shape.bare ? bare(io, names, cells, columns) : boxed(io, names, cells);
}

/** A cell as shown on a terminal: keys hidden, control and format characters escaped. */
function shownCell(io: IO, cell: string | number): string {
  return visible(io.redact(String(cell)));
}

/** No borders, two spaces between columns: cli-table3 drawing gh's look. */
const BARE = { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' };

/** cli-table3's look: a box, a line between rows, the head in cyan and the borders grey. */
function boxed(io: IO, head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [] } });
  t.push(...rows);
  return `${t.toString()}\n`;
}

/** gh's look: no borders, the head in bold, the last column unpadded; a line wider than the terminal cut with "…". */
function bare(io: IO, head: string[], rows: string[][], columns: number): string {
  const t = new Table({ head, chars: BARE, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 } });
  t.push(...rows);
  const lines = t.toString().split('\n').map((l) => cut(l.trimEnd(), columns));
  if (io.color) lines[0] = `\x1b[1m${lines[0]}\x1b[22m`;
  return `${lines.join('\n')}\n`;
}

/** Each row as a block of "column  value" lines (the column names in the table's head color), a blank line between; a value cut to the terminal. */
function expanded(io: IO, head: string[], rows: string[][], columns: number): string {
  const paint = (name: string) => (io.color ? `\x1b[36m${name}\x1b[39m` : name);
  return rows.map((r) => aligned(r.map((c, i) => [head[i]!, c]), columns, paint)).join('\n');
}

/** The narrowest a fitted column is cut to: past that the table is shown expanded (or, bare, its lines cut). */
const FIT_MIN = 10;

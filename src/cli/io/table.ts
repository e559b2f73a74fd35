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
  /** A long list that fits its own columns (models, batch list): a line still too wide is cut with "…", not shown expanded. */
  cutLines?: boolean;
}

/**
 * The one table router prints. Off a terminal: tab-separated lines without the header, as every list
 * prints when piped. On one: drawn by cli-table3 in gh's look, whatever the list: no borders, two spaces between columns, the head in
 * bold (when color is allowed), the last column unpadded. Each cell is first made safe so that the measure and the
 * terminal's agree: control and invisible format characters shown escaped (a server's `\x1b]0;…` would retitle the
 * window, a tab tear the row, a zero-width space count one column in the table and none on screen, a bidi override
 * reverse what follows it), and keys hidden before any cut; cut and fitted by textWidth (a wide letter two columns,
 * a combining mark or skin tone none). A table still wider than the terminal once its `fit` column is cut (a key's
 * hash is 64 columns) is shown as psql's expanded display does: each row a block of "column  value" lines, a value
 * past the line cut with "…"; or, for a long list that fits its own columns (`cutLines`), each line cut with "…".
 */
export function table(io: IO, head: readonly string[], rows: readonly (readonly (string | number)[])[], shape: TableShape = {}): string {
  if (!io.stdoutTTY) return rows.map((r) => tabLine(r)).join('');
  const cells = rows.map((r) => r.map((c) => shownCell(io, c)));
  const names = head.map((h) => visible(h));
  const widths = names.map((h, i) => Math.max(textWidth(h), ...cells.map((r) => textWidth(r[i] ?? ''))));
  const columns = io.columns ?? 80;
  const drawn = (w: number[]) => w.reduce((a, b) => a + b, 0) + GAP.length * (w.length - 1);
  const { fit } = shape;
  const over = drawn(widths) - columns;
  const fitted = fit !== undefined && over > 0 && widths[fit]! > FIT_MIN ? Math.max(FIT_MIN, widths[fit]! - over) : undefined;
  if (!shape.cutLines && drawn(fitted === undefined ? widths : widths.map((w, i) => (i === fit ? fitted : w))) > columns) return expanded(io, names, cells, columns);
  if (fitted !== undefined) {
    widths[fit!] = fitted;
    for (const r of cells) r[fit!] = cut(r[fit!]!, fitted);
  }
  return columnsOf(io, names, cells, columns);
}

/** A cell as shown on a terminal: keys hidden, control and format characters escaped. */
function shownCell(io: IO, cell: string | number): string {
  return visible(io.redact(String(cell)));
}

/** Between two columns: gh's two spaces. */
const GAP = '  ';

/** No borders, GAP between columns: cli-table3 drawing gh's look. */
const BARE = { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: GAP };

/** Each row on one line, the head bold when color is allowed, trailing blanks dropped (the last column unpadded). */
function columnsOf(io: IO, head: string[], rows: string[][], columns: number): string {
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

/** The narrowest a fitted column is cut to: past that the table is shown expanded. */
const FIT_MIN = 10;

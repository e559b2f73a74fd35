import { isTerminalBatchStatus } from '../../../client/facts.js';
import type { Batch } from '../../../client/types.js';
import type { IO } from '../../io/io.js';
import { described, tabLine } from '../../io/described.js';
import { textWidth } from '../../markdown/runs.js';
import { visible } from '../../../internal/visible.js';

/** A time the service gave, as a date; one no date can hold (a server's slip) as the number it sent. */
const iso = (seconds: number) => {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString().replace('.000Z', 'Z');
};

/** "3m ago", "2h ago", "5d ago": for a person on a terminal. */
export function ago(seconds: number, now = Date.now() / 1000): string {
  const d = Math.max(0, Math.round(now - seconds));
  if (d < 60) return `${d}s ago`;
  if (d < 3600) return `${Math.floor(d / 60)}m ago`;
  if (d < 86_400) return `${Math.floor(d / 3600)}h ago`;
  return `${Math.floor(d / 86_400)}d ago`;
}

const counts = (b: Batch) => `${b.request_counts.completed}/${b.request_counts.failed}/${b.request_counts.total}`;

export const TSV_FIELDS = ['id', 'status', 'endpoint', 'model', 'completed/failed/total', 'created'];

/**
 * The one rule for piped output of the batch commands (list, get, get --watch): one line per batch,
 * tab-separated: id, status, endpoint, model, completed/failed/total, created (ISO 8601 UTC).
 */
export function tsvLine(b: Batch): string {
  return tabLine([b.id, b.status, b.endpoint, b.model, counts(b), iso(b.created_at)]);
}

/** Columns for the terminal table, dropped from the right (then truncated) to fit `width`. */
export function tableRows(items: Batch[], width: number): { head: string[]; rows: string[][] } {
  const all = [
    { head: 'id', cell: (b: Batch) => b.id },
    { head: 'status', cell: (b: Batch) => b.status },
    { head: 'done/failed/total', cell: counts },
    { head: 'created', cell: (b: Batch) => ago(b.created_at) },
    { head: 'model', cell: (b: Batch) => b.model },
    { head: 'endpoint', cell: (b: Batch) => b.endpoint },
  ];
  // Measured as the table shows them: control characters escaped, wide letters two columns.
  const widthOf = (cols: typeof all) =>
    cols.reduce((sum, c) => sum + 2 + Math.max(textWidth(c.head), ...items.map((b) => textWidth(visible(c.cell(b))))), 0);
  let cols = all;
  while (cols.length > 2 && widthOf(cols) > width) cols = cols.slice(0, -1);
  return { head: cols.map((c) => c.head), rows: items.map((b) => cols.map((c) => c.cell(b))) };
}

export function describeBatch(io: IO, b: Batch): string {
  const lines: [string, string][] = [
    ['id', b.id],
    ['status', b.status],
    ['endpoint', b.endpoint],
    ['model', b.model],
    ['requests', `${b.request_counts.completed} completed, ${b.request_counts.failed} failed, ${b.request_counts.total} total`],
    ['created', `${iso(b.created_at)} (${ago(b.created_at)})`],
    ['finalized', b.finalized_at ? iso(b.finalized_at) : '-'],
  ];
  const cost = (b.usage as { cost?: unknown } | undefined)?.cost;
  // A running batch's usage is only what has run so far: its cost is shown once it ends.
  if (typeof cost === 'number' && isTerminalBatchStatus(b.status)) lines.push(['cost', `$${cost.toFixed(6)}`]);
  if (b.error) lines.push(['error', b.error.message]);
  return described(io, lines);
}

import Table from 'cli-table3';
import type { IO } from './io.js';

/**
 * A human table on a terminal (color only when the IO allows it); off one, tab-separated lines
 * without the header, as every list prints when piped.
 */
export function table(io: IO, head: string[], rows: (string | number)[][]): string {
  if (!io.stdoutTTY) return rows.map((r) => `${r.join('\t')}\n`).join('');
  const t = new Table({ head, style: { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [] } });
  for (const r of rows) t.push(r.map(String));
  return `${t.toString()}\n`;
}

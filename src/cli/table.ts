import Table from 'cli-table3';
import type { IO } from './io.js';

/** A human table (stdout on a TTY); color only when the IO allows it. */
export function table(io: IO, head: string[], rows: (string | number)[][]): string {
  const t = new Table({
    head,
    style: { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [] },
    chars: io.stdoutTTY ? undefined : { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' },
  });
  for (const r of rows) t.push(r.map(String));
  return `${t.toString()}\n`;
}

import { counted } from '../../internal/counted.js';

/**
 * Says once, on stderr, that a state file read at start held lines that could not be read (edited by hand, cut short by
 * a crash or a full disk): which file, how many were left out; the start goes on without them. As the CLI words a
 * damaged file it leaves out (src/cli/io/damaged-note.ts).
 */
export function saySkippedLines(file: string, skipped: number): void {
  if (skipped) process.stderr.write(`router serve: warning: ${file} is damaged: ${counted(skipped, 'line')} left out (fix it or move it away)\n`);
}

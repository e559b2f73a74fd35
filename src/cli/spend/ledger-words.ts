import { counted } from '../../internal/counted.js';

/** "line 7 of the usage ledger FILE is damaged (…)": which lines, named by number, so that they can be mended. */
export function damagedWords(lines: number, ledger: string, at: readonly number[]): string {
  const named = at.length ? ` (${at.length === 1 && lines === 1 ? 'line' : 'lines'} ${at.join(', ')}${lines > at.length ? ', …' : ''})` : '';
  return `${counted(lines, 'line')} of the usage ledger ${ledger}${named} ${lines === 1 ? 'is' : 'are'} damaged (torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile)`;
}

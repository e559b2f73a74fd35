/**
 * The ledger's whole lines holding a piece of text, read synchronously in pieces (the ledger may be large): where a
 * call ends (a late answer, a dead create's hold) and a line of it must be looked up before the next one is written.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { ledgerPath } from './ledger.js';

const CHUNK = 256 * 1024;

/** The records of the lines holding `needle` (as JSON writes it), in order; damaged lines are skipped. None where the ledger cannot be read. */
export function ledgerLinesWith(env: NodeJS.ProcessEnv, needle: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  let fd: number;
  try {
    fd = openSync(ledgerPath(env), 'r');
  } catch {
    return found;
  }
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry = '';
    for (let at = 0; ; ) {
      const n = readSync(fd, buf, 0, CHUNK, at);
      if (n <= 0) {
        linesIn(carry, needle, found);
        return found;
      }
      at += n;
      const text = carry + buf.toString('utf8', 0, n);
      const end = text.lastIndexOf('\n');
      linesIn(text.slice(0, end + 1), needle, found);
      carry = text.slice(end + 1);
    }
  } catch {
    return found;
  } finally {
    closeSync(fd);
  }
}

function linesIn(text: string, needle: string, found: Record<string, unknown>[]): void {
  let last = -1;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    const start = text.lastIndexOf('\n', i) + 1;
    // One line holding the text twice is one record.
    if (start === last) continue;
    last = start;
    const line = text.slice(start, (text.indexOf('\n', i) + 1 || text.length + 1) - 1);
    try {
      const r: unknown = JSON.parse(line);
      if (r && typeof r === 'object' && !Array.isArray(r)) found.push(r as Record<string, unknown>);
    } catch {
      // A damaged line says nothing.
    }
  }
}

/**
 * Linux shows the environment a process started with at /proc/PID/environ, to every process of the
 * same user: a tool it runs could read its parent's keys there (`cat /proc/$PPID/environ`) though its
 * own environment holds none. That text is the process's own memory, left as it was when variables
 * change: this writes `*` over each secret in it, after setting each variable that holds one again
 * (the new value lives elsewhere), so that the process itself still reads every variable as it was.
 * Only for a process that is a program's own (the CLI), never from a library: it changes the process.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hideable } from './hide-secrets.js';

/** Hides `secrets` (8 characters or more) from /proc/self/environ; false where that cannot be done (not Linux, /proc/self/mem closed). */
export function hideFromEnviron(secrets: (string | undefined)[]): boolean {
  const hidden = [...new Set(secrets.filter(hideable))];
  let block: Buffer, start: number;
  try {
    block = readFileSync('/proc/self/environ');
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // env_start: the 50th field, counted from the state letter after the command's name (the 3rd).
    start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[47]);
  } catch {
    return false;
  }
  const at = inValues(block, hidden);
  if (!at.length) return true;
  if (!Number.isSafeInteger(start) || start <= 0) return false;
  for (const { name } of at) {
    const value = process.env[name];
    if (value !== undefined) process.env[name] = value;
  }
  let fd: number | undefined;
  try {
    fd = openSync('/proc/self/mem', 'r+');
    for (const { i, length } of at) writeSync(fd, Buffer.alloc(length, '*'), 0, length, start + i);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Where the secrets are in the values of the block's NAME=value entries: never in a name (a key that
 * is a part of another variable's name must not rename it), and only in a variable whose name reads
 * back, so that it can be set again before its old text changes.
 */
function inValues(block: Buffer, secrets: string[]): { name: string; i: number; length: number }[] {
  const out: { name: string; i: number; length: number }[] = [];
  for (let from = 0; from < block.length; ) {
    const nul = block.indexOf(0, from);
    const end = nul === -1 ? block.length : nul;
    const eq = block.indexOf('=', from);
    const name = eq > from && eq < end ? block.toString('utf8', from, eq) : undefined;
    if (name !== undefined && Buffer.from(name).equals(block.subarray(from, eq))) {
      for (const s of secrets) {
        const needle = Buffer.from(s);
        for (let i = block.indexOf(needle, eq + 1); i !== -1 && i + needle.length <= end; i = block.indexOf(needle, i + needle.length)) out.push({ name, i, length: needle.length });
      }
    }
    from = end + 1;
  }
  return out;
}

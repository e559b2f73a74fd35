/**
 * Linux shows the environment a process started with at /proc/PID/environ, to every process of the
 * same user: a tool it runs could read its parent's keys there (`cat /proc/$PPID/environ`) though its
 * own environment holds none. That text is the process's own memory, left as it was when variables
 * change: this writes `*` over each secret in it, after setting each variable that holds one again
 * (the new value lives elsewhere), so that the process itself still reads every variable as it was.
 * Only for a process that is a program's own (the CLI), never from a library: it changes the process.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** Hides `secrets` (8 characters or more) from /proc/self/environ; false where that cannot be done (not Linux, /proc/self/mem closed). */
export function hideFromEnviron(secrets: (string | undefined)[]): boolean {
  const hidden = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8))];
  let block: Buffer, start: number;
  try {
    block = readFileSync('/proc/self/environ');
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // env_start: the 50th field, counted from the state letter after the command's name (the 3rd).
    start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[47]);
  } catch {
    return false;
  }
  const at = hidden.flatMap((s) => offsets(block, Buffer.from(s)).map((i) => [i, Buffer.byteLength(s)] as const));
  if (!at.length) return true;
  if (!Number.isSafeInteger(start) || start <= 0) return false;
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && hidden.some((s) => value.includes(s))) process.env[name] = value;
  let fd: number | undefined;
  try {
    fd = openSync('/proc/self/mem', 'r+');
    for (const [i, length] of at) writeSync(fd, Buffer.alloc(length, '*'), 0, length, start + i);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function offsets(block: Buffer, needle: Buffer): number[] {
  const out: number[] = [];
  for (let i = block.indexOf(needle); i !== -1; i = block.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

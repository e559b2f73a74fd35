import { readFileSync, readlinkSync } from 'node:fs';

/**
 * True while a process with this id runs (or exists but is not ours to signal). A zombie (it
 * exited; its parent has not reaped it yet) holds nothing: it is not alive.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return !isZombie(pid);
}

/** Linux: the state letter after the command name in /proc/PID/stat is Z (zombie) or X (dead). */
function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/**
 * When a process started (Linux: clock ticks after boot, /proc/PID/stat's 22nd field), to tell it
 * from a later process given the same id; undefined where that cannot be read.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * True while the process that had this id when it started at `start` (processStart()) still runs: a
 * later process given the same id is not it. Without a start (an older writer's, or none readable
 * here), only the id is known, and it is taken for that process while it runs.
 */
export function sameProcessAlive(pid: number, start: string | undefined): boolean {
  if (!processAlive(pid)) return false;
  const now = start === undefined ? undefined : processStart(pid);
  return now === undefined || now === start;
}

/**
 * The pid namespace of a process (Linux: the inode /proc/PID/ns/pid names), to tell a process of another
 * namespace (another container on this machine) given the same id and start; undefined where it cannot be read.
 */
export function pidNamespace(pid: number | 'self' = 'self'): string | undefined {
  try {
    return /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))?.[1];
  } catch {
    return undefined;
  }
}

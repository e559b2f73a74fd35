import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';

/** When process `pid` started, as /proc/PID/stat's 22nd field says (clock ticks after boot). */
function startOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** How a gateway of process `pid` names itself beside a cassette it writes (`<file>.json.<pid>@<start>~<pidns>.partial`, `.tmp`). */
export const writerOf = (pid: number): string => `${pid}@${startOf(pid)}~${/\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))![1]}`;

const LAST_PID = '/proc/sys/kernel/ns_last_pid';

/** Whether this test may choose the next pid (Linux, root in its pid namespace): pidReused() can run. */
export function pidsChosen(): boolean {
  try {
    writeFileSync(LAST_PID, readFileSync(LAST_PID, 'latin1'));
    return true;
  } catch {
    return false;
  }
}

/**
 * A process (`sleep`) given `pid`, a process that ended: the kernel is told the pid before it is the
 * last one given, and the next fork takes it. Other processes fork too (other tests, other jobs):
 * tried until one lands on it, up to `tries` times. Undefined when none did.
 */
export async function pidReused(pid: number, tries = 50): Promise<ChildProcess | undefined> {
  for (let i = 0; i < tries; i++) {
    writeFileSync(LAST_PID, String(pid - 1));
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    if (child.pid === pid) return child;
    child.kill('SIGKILL');
    await new Promise((ok) => child.once('exit', ok));
  }
  return undefined;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { until } from './until.js';

/**
 * spawnSync's result, without blocking this worker while the child runs: a worker blocked past 60 s
 * (a slow child on a loaded machine) has vitest's own RPC to the main process time out ("Timeout
 * calling onTaskUpdate"), an error that fails a run whose tests all passed.
 */
export function runProcess(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs) : undefined;
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/**
 * A child's status as a shell's `$?` shows it: its exit code, or 128 + the number of the signal that ended
 * it (router dies of the SIGINT that stopped it, as the shell's convention has it: `$?` is 130).
 */
export function shellStatus(code: number | null, signal: NodeJS.Signals | null): number | null {
  return code ?? (signal ? 128 + constants.signals[signal] : null);
}

/** `child`'s shellStatus once it has closed. */
export function closedStatus(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(shellStatus(code, signal))));
}

/** Kills `child` with -9 and resolves once it has exited; at once when it already had (no exit event is to come). */
export function killedNine(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** A process that still runs (a zombie has ended: only its parent has not read its status yet). */
export function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * `child` killed with `signal` while a tool call runs: once `ready()` holds (waited for, not timed), the pids
 * `pidFiles` name are read and `child` is sent `signal`; once it has closed, what it had started is given
 * `goneWithinMs` (the test's wait bound by default) to end. What each step found, for the test to judge.
 */
export async function killDuringCall(child: ChildProcess, signal: NodeJS.Signals, ready: () => boolean, pidFiles: string[], goneWithinMs?: number): Promise<{ ready: boolean; runningAtKill: boolean; status: number | null; left: number[] }> {
  const exited = closedStatus(child);
  const isReady = await until(ready);
  const started = isReady ? pidFiles.map((f) => Number(readFileSync(f, 'utf8').trim())) : [];
  const runningAtKill = started.every(running);
  child.kill(signal);
  const status = await exited;
  await until(() => !started.some(running), goneWithinMs);
  return { ready: isReady, runningAtKill, status, left: started.filter(running) };
}

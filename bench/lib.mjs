// Shared helpers of the benchmarks: an emulator in a child process, timing, reporting.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// BENCH_BIN: another build's launcher (a checkout of an older commit), for a before/after in the same rows.
export const BIN = process.env.BENCH_BIN ?? join(ROOT, 'bin', 'router.cjs');
export const WORK = mkdtempSync(join(tmpdir(), 'router-bench-'));
// NODE_EXTRA_CA_CERTS makes every node process parse that file as it starts: on a machine where it names
// the system's whole bundle (144 certificates on the bench's VM) `node -e 0` costs ~413 M instructions
// instead of ~87 M, which shrinks every ratio against it. Users rarely have it set: the bench's processes
// start without it (both sides alike) unless BENCH_EXTRA_CA_CERTS=keep.
if (process.env.NODE_EXTRA_CA_CERTS && process.env.BENCH_EXTRA_CA_CERTS !== 'keep') {
  process.stderr.write(`bench: started without NODE_EXTRA_CA_CERTS (${process.env.NODE_EXTRA_CA_CERTS}); BENCH_EXTRA_CA_CERTS=keep keeps it\n`);
  delete process.env.NODE_EXTRA_CA_CERTS;
}
// What the bench writes (about 1.6 GB of inputs, results and state) goes with it, however it ends.
const emulators = new Set();
process.on('exit', () => {
  for (const server of emulators) server.kill('SIGKILL');
  rmSync(WORK, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

export async function startEmulator(stateDir = join(WORK, 'state')) {
  // BENCH_NODE_ARGS: node flags for the emulator (--cpu-prof, --heapsnapshot-signal=SIGUSR2), to look inside it.
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const server = spawn(process.execPath, [...nodeArgs, BIN, 'serve', '--port', '0', '--state', stateDir, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  emulators.add(server);
  server.once('exit', () => emulators.delete(server));
  const line = await new Promise((resolve) => createInterface({ input: server.stdout }).once('line', resolve));
  const info = JSON.parse(line);
  // Plenty of credit for long runs.
  await fetch(`${info.api_root}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${info.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1e6 }) });
  return { ...info, pid: server.pid, port: Number(new URL(info.api_root).port), stop: () => new Promise((r) => { server.once('exit', r); server.kill('SIGTERM'); }) };
}

/**
 * Runs a command to completion; resolves with wall time (ms), stdout byte count, peak RSS (KiB), CPU
 * time (user + system, ms: on a loaded machine steadier than wall time) and minor page faults (each a
 * fresh page of memory: steadier still, and ~20 us each on the bench's VM), the last three from /usr/bin/time.
 * stdout 'null': straight to /dev/null (nothing counted, no reader process). stdinFile: stdin is that file (`< FILE`).
 */
export function timed(cmd, args, { env = process.env, input, stdinFile, stdout = 'count' } = {}) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const out = stdout === 'null' ? openSync('/dev/null', 'w') : 'pipe';
    const stdin = stdinFile ? openSync(stdinFile, 'r') : input ? 'pipe' : 'ignore';
    const child = spawn('/usr/bin/time', ['-f', '%M %U %S %R', cmd, ...args], { env, stdio: [stdin, out, 'pipe'] });
    if (typeof out === 'number') closeSync(out);
    if (typeof stdin === 'number') closeSync(stdin);
    let bytes = 0;
    let err = '';
    child.stdout?.on('data', (c) => (bytes += c.length));
    child.stderr.on('data', (c) => (err += c));
    if (input) child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const [rssKiB, user, system, faults] = err.trim().split('\n').at(-1).split(' ').map(Number);
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(0, 300)}`));
      resolve({ ms, bytes, rssKiB, cpuMs: (user + system) * 1000, faults });
    });
  });
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = [];
/** One row of the table; `info` rows (goal 'info') give context and are not counted as goals. */
export function report(name, value, goal, pass) {
  rows.push({ name, value, goal, pass });
  const mark = goal === 'info' ? '    ' : pass ? 'ok  ' : 'MISS';
  console.log(`${mark}  ${name.padEnd(58)} ${value.padEnd(26)}${goal === 'info' ? '' : ` goal ${goal}`}`);
}
export function summary() {
  const goals = rows.filter((r) => r.goal !== 'info');
  const missed = goals.filter((r) => !r.pass).length;
  console.log(`\n${goals.length - missed} of ${goals.length} goals met`);
}

/** Requests per second at 64 connections for 3 s, measured by autocannon in its own process. */
export function rate(url, headers, body, seconds = 3) {
  const bin = join(ROOT, 'node_modules', '.bin', 'autocannon');
  const args = ['-c', '64', '-d', String(seconds), '-m', 'POST', '-b', body, '--json'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const out = execFileSync(bin, [...args, url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  const result = JSON.parse(out);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon: ${result.non2xx} non-2xx answers, ${result.errors} errors on ${url}`);
  return result.requests.average;
}

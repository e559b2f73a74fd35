// Real-time priority for the gateway's latency rows (#43). On this shared 2-core machine the slowest 1% of
// requests were whole-machine stalls (other processes' work), the bare relay's alike, and the p99 rows'
// intervals wider than the goal; under `chrt -f 1` (SCHED_FIFO, priority 1) the same build's rows were met
// with intervals inside the goal (stop 71). So the load generator and every side (upstream, gateway, the
// build before, the bare relay) are raised alike, all their threads, while the open-loop rows run (500/s
// leaves the cores idle between requests; the kernel's RT throttling keeps 5% for the rest), and lowered
// again before the closed-loop CPU and memory runs, which would hold both cores. BENCH_REALTIME=0 measures
// at normal priority; where raising is not allowed (no CAP_SYS_NICE) the rows say so and run at normal priority.
import { execFileSync } from 'node:child_process';

const chrt = (args) => execFileSync('chrt', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const isFifo = (pid) => /SCHED_FIFO/.test(chrt(['-p', String(pid)]));

/** Raises `pids` to SCHED_FIFO 1; `words` says how the rows were measured, `restore()` lowers what it raised. */
export function raisePriority(pids) {
  if (process.env.BENCH_REALTIME === '0') return { words: 'normal priority (BENCH_REALTIME=0)', restore() {} };
  const raised = [];
  const restore = () => {
    for (const pid of raised.splice(0)) {
      try {
        chrt(['-a', '-o', '-p', '0', String(pid)]);
      } catch {
        // it has exited
      }
    }
  };
  try {
    if (isFifo(process.pid)) return { words: 'real-time priority (the bench was started under it)', restore() {} };
    for (const pid of pids) {
      chrt(['-a', '-f', '-p', '1', String(pid)]);
      raised.push(pid);
    }
    return { words: 'real-time priority (SCHED_FIFO 1, every side and the load generator alike; BENCH_REALTIME=0 for normal)', restore };
  } catch (error) {
    restore();
    const why = String(error.stderr || error.message).split('\n')[0].trim();
    return { words: `normal priority: real-time not allowed here (${why})`, restore() {} };
  }
}

// `gateway-tail`: what the slowest streamed requests at 500/s waited for (#43's p99). Direct, through the
// gateway and through the bare relay by turns in 200 ms slices (as `gateway`'s rows), every process
// (upstream, gateway, relay, this load generator) run with bench/gc-watch.cjs, which logs its
// collections, event-loop stalls and state saves with wall-clock times. Of each side's slowest 1%,
// how many overlapped a mark-compact (or its incremental marking) of that side's own process, else one
// of its scavenges, else another stall of its own, else a pause of the upstream or of the load
// generator; beside how many of all its requests overlapped each. Counts of coincidence, not causes
// proved; on a busy machine everything overlaps everything (run it under `chrt -f 1`, briefly). Then each
// cause alone: the share of the slowest that overlapped it against the share of all (a cause that
// explains the tail overlaps far more of the slowest than of all), with the gateway's file calls on
// libuv's threads, and its writeSync on the loop (a charge's), that took over 1 ms, and each
// process's event-loop delay (monitorEventLoopDelay, per second). BENCH_GATEWAY_SECONDS: each side's
// seconds of load (default 20). BENCH_GATEWAY_SLICE_MS: as `gateway`'s (default 20; 0: per request,
// direct and the gateway only, each at 500/s).
// BENCH_TAIL_KEEP=DIR: every logged pause and request kept there. BENCH_GATEWAY_STATE_ROOT=/dev/shm:
// the gateway's state on a tmpfs (an experiment: the disk out of the charges' writes).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Agent } from 'undici';
import { ROOT, WORK, report } from './lib.mjs';
import { closed, hitOnce, pct, sendAtTimes, startGateway, startUpstream } from './gateway.mjs';

const SECONDS = Number(process.env.BENCH_GATEWAY_SECONDS ?? 20);
const RATE = 500;
const SLICE_MS = Number(process.env.BENCH_GATEWAY_SLICE_MS ?? 20);

/** Each request's side, start and end (ms since the epoch), open loop at RATE/s a side (gateway.mjs's sendAtTimes()). */
async function sliced(agent, sides, seconds) {
  const out = [];
  await sendAtTimes(sides, RATE, seconds, SLICE_MS, async (index, planned) => {
    const side = sides[index];
    const start = Math.min(planned, performance.now());
    const status = await hitOnce(agent, side.target, side.body);
    if (status !== 200) throw new Error(`bench: HTTP ${status} from ${side.target.api_root}`);
    out.push({ side: side.name, start: performance.timeOrigin + start, end: performance.timeOrigin + performance.now() });
  });
  return out;
}

/** A process's logged pauses within [from, to]: `[kind, start, ms, detail]`. */
function pausesOf(dir, pid, from, to) {
  const file = readdirSync(dir).find((f) => f === `${pid}.jsonl`);
  if (!file) return [];
  return readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((x) => x[1] + x[2] >= from && x[1] <= to);
}

const MAJOR = (x) => x[0] === 'gc' && (x[3] === 4 || x[3] === 8);
const SCAVENGE = (x) => x[0] === 'gc' && x[3] === 1;
const STALL = (x) => x[0] === 'stall';
const ANY = (x) => x[0] === 'gc' || x[0] === 'stall';

export const tailSections = {
  async 'gateway-tail'() {
    const dir = join(WORK, 'gc-watch');
    mkdirSync(dir, { recursive: true });
    process.env.GC_WATCH_DIR = dir;
    const watch = join(ROOT, 'bench', 'gc-watch.cjs');
    const options = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${options ?? ''} --require ${watch}`.trim();
    createRequire(import.meta.url)(watch);
    const upstream = await startUpstream('gateway-tail-upstream');
    const gateway = await startGateway(upstream, undefined, 'gateway-tail');
    const relay = await startGateway(upstream, join(ROOT, 'bench', 'bare-relay.mjs'), 'bare-relay');
    if (options === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = options;
    const agent = new Agent({ connections: 256 });
    const ask = (model) => JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'write 20 words' }] });
    const sides = [
      { name: 'direct', target: upstream, body: ask('local/lorem'), pid: upstream.pid },
      { name: 'gateway', target: gateway, body: ask('bench/lorem'), pid: gateway.pid },
      { name: 'bare relay', target: relay, body: ask('bench/lorem'), pid: relay.pid },
    ].slice(0, SLICE_MS ? 3 : 2); // per request, each side at 500/s: direct and the gateway only (1,500/s saturated 2 cores)
    try {
      for (const side of sides.slice(1)) await closed(agent, side.target, side.body, 8, 3000);
      await sliced(agent, sides, 2);
      const requests = await sliced(agent, sides, SECONDS);
      // The preload writes each second: the last second's lines, then read.
      await new Promise((r) => setTimeout(r, 1200));
      const from = Math.min(...requests.map((r) => r.start));
      const to = Math.max(...requests.map((r) => r.end));
      const load = pausesOf(dir, process.pid, from, to);
      const up = pausesOf(dir, upstream.pid, from, to);
      for (const side of sides) {
        const own = pausesOf(dir, side.pid, from, to);
        const mine = requests.filter((r) => r.side === side.name);
        const ms = mine.map((r) => r.end - r.start);
        const p99 = pct(ms, 0.99);
        const slow = mine.filter((r) => r.end - r.start >= p99);
        const over = (r, pauses, which) => pauses.some((x) => which(x) && x[1] <= r.end && x[1] + x[2] >= r.start);
        const causes = [['its major GC', own, MAJOR], ['its scavenge', own, SCAVENGE], ['another stall of its own', own, STALL], ['the upstream', side.name === 'direct' ? [] : up, ANY], ['the load generator', load, ANY]];
        const counted = causes.map(() => 0);
        for (const r of slow) {
          const i = causes.findIndex(([, pauses, which]) => over(r, pauses, which));
          if (i >= 0) counted[i]++;
        }
        const share = (which, pauses) => `${((100 * mine.filter((r) => over(r, pauses, which)).length) / mine.length).toFixed(1)}%`;
        const words = causes.map(([name, pauses, which], i) => `${name} ${counted[i]} (all ${share(which, pauses)})`).join(', ');
        report(`${side.name}, streamed ${RATE}/s${SLICE_MS ? ` in ${SLICE_MS} ms slices` : ', per request by turns'}: p50, p99; of the ${slow.length} slowest, overlapping first`, `${pct(ms, 0.5).toFixed(2)}, ${p99.toFixed(2)} ms; ${words}; none ${slow.length - counted.reduce((a, n) => a + n, 0)}`, 'info');
        // Each cause alone (not first-found): the share of the slowest that overlapped it, against the share of all.
        const alone = [['its GC', own, (x) => x[0] === 'gc'], ['its other stalls', own, STALL], ['its file calls over 1 ms', own, (x) => x[0] === 'io'], ['the upstream', side.name === 'direct' ? [] : up, ANY], ['the load generator', load, ANY]];
        const pctOf = (xs, which, pauses) => ((100 * xs.filter((r) => over(r, pauses, which)).length) / xs.length).toFixed(0);
        report(`  each alone, % of the slowest (% of all)`, alone.map(([name, pauses, which]) => `${name} ${pctOf(slow, which, pauses)} (${pctOf(mine, which, pauses)})`).join(', '), 'info');
        const gcs = (which) => own.filter((x) => which(x) && x[0] === 'gc' && x[3] !== 8);
        const pauses = (xs) => `${xs.length} (median ${(pct(xs.map((x) => x[2]), 0.5) ?? 0).toFixed(2)} ms)`;
        report(`  ${side.name === 'direct' ? 'the upstream' : side.name}: mark-compacts, scavenges, stalls over 2.5 ms, file calls over 1 ms in ${((to - from) / 1000).toFixed(0)} s`, `${pauses(gcs(MAJOR))}, ${pauses(gcs(SCAVENGE))}, ${own.filter(STALL).length}, ${pauses(own.filter((x) => x[0] === 'io'))}`, 'info');
      }
      if (process.env.BENCH_TAIL_KEEP) {
        // Everything logged, and each request (`[side, start, end]`), for a closer look.
        const { cpSync, writeFileSync } = await import('node:fs');
        cpSync(dir, process.env.BENCH_TAIL_KEEP, { recursive: true });
        writeFileSync(join(process.env.BENCH_TAIL_KEEP, 'requests.json'), JSON.stringify({ from, to, pids: { load: process.pid, upstream: upstream.pid, gateway: gateway.pid, relay: relay.pid }, requests: requests.map((r) => [r.side, r.start, r.end]) }));
      }
      // The event loop's delay each second (monitorEventLoopDelay): the median second's p99 and the worst second's max.
      for (const [name, pid] of [['load generator', process.pid], ['upstream', upstream.pid], ['gateway', gateway.pid], ['bare relay', relay.pid]]) {
        const secs = pausesOf(dir, pid, from, to).filter((x) => x[0] === 'eld');
        const { count, p99 } = { count: secs.length, p99: secs.map((x) => x[3]) };
        report(`  ${name}: event-loop delay, p99 of the median second, max of the worst (${count} s)`, `${(pct(p99, 0.5) ?? 0).toFixed(2)}, ${Math.max(0, ...secs.map((x) => x[2])).toFixed(2)} ms`, 'info');
      }
    } finally {
      await agent.close();
      await relay.stop();
      await gateway.stop();
      await upstream.stop();
    }
  },
};

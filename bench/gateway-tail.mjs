// `gateway-tail`: what the slowest streamed requests at 500/s waited for (#43's p99). Direct, through the
// gateway and through the bare relay by turns in 200 ms slices (as `gateway`'s rows), every process
// (upstream, gateway, relay, this load generator) run with bench/gc-watch.cjs, which logs its
// collections, event-loop stalls and state saves with wall-clock times. Of each side's slowest 1%,
// how many overlapped a mark-compact (or its incremental marking) of that side's own process, else one
// of its scavenges, else another stall of its own, else a pause of the upstream or of the load
// generator; beside how many of all its requests overlapped each. Counts of coincidence, not causes
// proved; on a busy machine everything overlaps everything (run it under `chrt -f 1`, briefly).
// BENCH_GATEWAY_SECONDS: each side's seconds of load (default 20).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Agent } from 'undici';
import { ROOT, WORK, report } from './lib.mjs';
import { closed, hit, pct, startGateway, startUpstream } from './gateway.mjs';

const SECONDS = Number(process.env.BENCH_GATEWAY_SECONDS ?? 20);
const RATE = 500;
const SLICE_MS = 200;

/** Each request's side, start and end (ms since the epoch), open loop at RATE/s, the sides by turns in slices. */
async function sliced(agent, sides, seconds) {
  const count = RATE * seconds * sides.length;
  const t0 = performance.now() + 20;
  const out = [];
  await Promise.all(Array.from({ length: count }, async (_, i) => {
    const planned = t0 + (i * 1000) / RATE;
    const side = sides[Math.floor((planned - t0) / SLICE_MS) % sides.length];
    const wait = planned - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const start = Math.min(planned, performance.now());
    const status = await hit(agent, side.target, side.body);
    if (status !== 200) throw new Error(`bench: HTTP ${status} from ${side.target.api_root}`);
    out.push({ side: side.name, start: performance.timeOrigin + start, end: performance.timeOrigin + performance.now() });
  }));
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
    ];
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
        report(`${side.name}, streamed ${RATE}/s: p50, p99; of the ${slow.length} slowest, overlapping first`, `${pct(ms, 0.5).toFixed(2)}, ${p99.toFixed(2)} ms; ${words}; none ${slow.length - counted.reduce((a, n) => a + n, 0)}`, 'info');
        const gcs = (which) => own.filter((x) => which(x) && x[0] === 'gc' && x[3] !== 8);
        const pauses = (xs) => `${xs.length} (median ${(pct(xs.map((x) => x[2]), 0.5) ?? 0).toFixed(2)} ms)`;
        report(`  ${side.name === 'direct' ? 'the upstream' : side.name}: mark-compacts, scavenges, stalls over 2.5 ms in ${((to - from) / 1000).toFixed(0)} s`, `${pauses(gcs(MAJOR))}, ${pauses(gcs(SCAVENGE))}, ${own.filter(STALL).length}`, 'info');
      }
    } finally {
      await agent.close();
      await relay.stop();
      await gateway.stop();
      await upstream.stop();
    }
  },
};

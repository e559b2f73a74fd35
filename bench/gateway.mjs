// The gateway's overhead (#43): added latency of a chat call through `router serve --providers` vs the same
// call straight to its upstream, at fixed arrival rates, streamed and not; and the gateway's RSS over many
// proxied streams. The upstream (both sides call the same one) is bench/mock-upstream.mjs: canned answers,
// byte for byte and write for write what `router serve`'s fake models send to these requests, at a
// fraction of their CPU. The anchors (TensorZero, Bifrost) measure against a mock provider too; with a full
// `router serve` as the upstream (~600 µs CPU per stream, near saturation at 500/s on 2 cores) the direct
// side's own p99 was 7-13 ms and the streamed rows measured the upstream's noise.
// BENCH_GATEWAY_UPSTREAM=emulator: the old upstream, a `router serve` (its fake models), for the old rows. BENCH_GATEWAY_SECONDS sets each round's length (default 2),
// BENCH_GATEWAY_STREAMS the streams of the memory run (default 100,000). BENCH_GATEWAY_BEFORE: another
// build's launcher (a checkout of an older commit), run as a second gateway on the same upstream, its
// rounds interleaved with this one's: a before/after under the same load.
// Each round measures direct and through the gateway(s) interleaved: the arrivals go to each side in
// turn in slices of BENCH_GATEWAY_SLICE_MS (default 20), each side at the row's rate in its slices, so
// a burst of other work on the machine lands on every side alike. A row gives the median over
// BENCH_GATEWAY_ROUNDS rounds (default 10) of (through minus direct, that round's percentile of each)
// and their spread: the difference of two percentiles, not the percentile of a per-request difference.
// Why 20 ms, not the 200 ms of stops 58-65 (session 66, `gateway-tail` on the 2-core machine at load
// average 25-35, its processes under `chrt -f 1`): the slowest 1% of each side were mostly a few
// stalls of every process at once, 10 to 120 ms each, 4 to 7 in 30 s (none of them any process's own
// collection), and a 200 ms slice gave each one whole to one side: in one run the direct side's 50
// slowest were one 119 ms stall, in another the gateway's a 55 ms one. A round's p99 difference then
// went from -45 to +50 ms, and A/A runs (BENCH_GATEWAY_BEFORE the same build) differed by 0.8 to 10.8
// ms between their two gateways (four runs). In 20 ms slices such a stall spans every side: four A/A
// runs 0.1 to 0.5 ms apart (a round still -12 to +52 ms). BENCH_GATEWAY_SLICE_MS=0: per request, a window for each through side with the
// direct side, their requests by turns, each at the row's rate: the machine then carries twice the
// row's rate, which made the gateway's p50 0.3 ms longer than in slices (the bare relay's not), and the
// A/A runs differed by 0.4 to 1.3 ms. And the load generator makes each request when it is due, not
// all of a run's closures and timers up front: those stalled it 116 ms as a 10 s run began, every
// request of the first slice counted that late, on whichever side began the round.
// A third side, always: bench/bare-relay.mjs, the least a relay can do (node:http in front, undici
// behind, nothing parsed): what one more process hop costs on this machine at that rate, so a row
// tells the gateway's own cost from the machine's. Before the first row every gateway gets
// BENCH_GATEWAY_WARM requests of each kind (default 3,000), 8 at a time: its code optimized.
// `gateway-gc`: the young generation's collections in the gateway under that load (what a request leaves
// alive sets how long each one pauses), from --trace-gc-nvp: counts and bytes, not timing; with the
// bytes a request allocates (fewer: fewer scavenges), mark-compacts, and the connections the gateway
// opened to the mock upstream per 1,000 requests (a request that waits for one pays a connect).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent } from 'undici';
import { BIN, ROOT, WORK, startEmulator, report } from './lib.mjs';
import { raisePriority } from './realtime.mjs';

const BEFORE = process.env.BENCH_GATEWAY_BEFORE;
/** Node flags for one build's gateway only (an experiment: `--max-semi-space-size=64`): BENCH_GATEWAY_NODE_ARGS this build's, BENCH_GATEWAY_BEFORE_NODE_ARGS the before side's. */
const words = (text) => text?.split(' ').filter(Boolean) ?? [];
const NODE_ARGS = new Map([[BIN, words(process.env.BENCH_GATEWAY_NODE_ARGS)], [BEFORE, words(process.env.BENCH_GATEWAY_BEFORE_NODE_ARGS)]]);
const SLICE_MS = Number(process.env.BENCH_GATEWAY_SLICE_MS ?? 20);
/** With a before side, an even count: each build in each place as often. */
const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 10);
const SECONDS = Number(process.env.BENCH_GATEWAY_SECONDS ?? 2);
const STREAMS = Number(process.env.BENCH_GATEWAY_STREAMS ?? 100_000);
/** Requests of each kind (streamed, not) every gateway is sent before the first row, 8 at a time: its code optimized. */
const WARM = Number(process.env.BENCH_GATEWAY_WARM ?? 3000);
/** BENCH_GATEWAY_ROWS=streamed-500,plain-100: only those latency rows, and no CPU or memory run (an A/B of one row); `cpu` among them: the CPU rows of those kinds too; `memory`: the CPU rows and the memory run too. */
const ROWS = process.env.BENCH_GATEWAY_ROWS?.split(',');
const rowWanted = (stream, perSecond) => !ROWS || ROWS.includes(`${stream ? 'streamed' : 'plain'}-${perSecond}`);
const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
/** CPU time (user + system) a process has used, in microseconds: per request, it shrugs off a machine busy with others. */
const cpuMicros = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
export const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const med = (xs) => pct(xs, 0.5);
/** Per round, a percentile through the gateway minus the same percentile direct: the median, and the range. */
const added = (via, direct, p) => {
  const each = via.map((v, i) => pct(v, p) - pct(direct[i], p));
  // A round that found the gateway faster than direct by more than the goal measured the machine, not the gateway.
  return { median: med(each), low: Math.min(...each), spread: `spread ${Math.min(...each).toFixed(2)} to ${Math.max(...each).toFixed(2)}`, via: med(via.map((v) => pct(v, p))), direct: med(direct.map((d) => pct(d, p))) };
};

/**
 * The same difference pooled: every round's requests of a side together (10 rounds of 2 s at 500/s:
 * 10,000 a side, so the p99 is its 100th slowest, not each round's 10th), through minus direct; and a
 * 90% interval for it from the rounds resampled with replacement (the rounds, not the requests: a
 * stall lands on a round's neighbouring requests alike). `minus`: another side's pooled percentile
 * instead of direct's (a build against the build before, rounds paired). Deterministic: a fixed seed.
 */
export function pooled(via, direct, p, resamples = 400) {
  const at = (rounds, sides) => pct(rounds.flatMap((i) => sides[i]), p);
  const all = via.map((_, i) => i);
  const value = at(all, via) - at(all, direct);
  let seed = 43;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const draws = [];
  for (let k = 0; k < resamples; k++) {
    const rounds = all.map(() => Math.floor(random() * all.length));
    draws.push(at(rounds, via) - at(rounds, direct));
  }
  draws.sort((a, b) => a - b);
  return { value, low: draws[Math.floor(resamples * 0.05)], high: draws[Math.floor(resamples * 0.95)] };
}
const interval = (x) => `${x.value.toFixed(2)} ms (90% ${x.low.toFixed(2)} to ${x.high.toFixed(2)})`;

/** Where the gateways keep their state: the bench's folder (tmpdir()), unless BENCH_GATEWAY_STATE_ROOT names another (a tmpfs: no disk under the charges' writes). */
const STATE_ROOT = process.env.BENCH_GATEWAY_STATE_ROOT ? mkdtempSync(join(process.env.BENCH_GATEWAY_STATE_ROOT, 'router-bench-')) : WORK;
process.on('exit', () => STATE_ROOT !== WORK && rmSync(STATE_ROOT, { recursive: true, force: true }));
const UPSTREAM = process.env.BENCH_GATEWAY_UPSTREAM === 'emulator' ? 'emulator' : 'mock';
const UPSTREAM_WORDS = UPSTREAM === 'emulator' ? 'a `router serve` (its fake models; BENCH_GATEWAY_UPSTREAM=emulator)' : 'bench/mock-upstream.mjs (canned answers, the fake models\' bytes; BENCH_GATEWAY_UPSTREAM=emulator for a `router serve`)';
const mocks = new Set();
process.on('exit', () => {
  for (const mock of mocks) mock.kill('SIGKILL');
});

/** The upstream both sides call: the mock (default), or a `router serve`. */
export async function startUpstream(name) {
  if (UPSTREAM === 'emulator') return startEmulator(join(WORK, name));
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'mock-upstream.mjs'), '--exit-with-stdin'], { stdio: ['pipe', 'pipe', 'inherit'] });
  mocks.add(child);
  child.once('exit', () => mocks.delete(child));
  const info = JSON.parse(await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve)));
  return { ...info, pid: child.pid, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
}

export async function startGateway(upstream, bin = BIN, name = 'gateway', nodeArgs = []) {
  const file = join(WORK, 'gateway-providers.yaml');
  writeFileSync(file, `providers:\n  - name: up\n    base_url: ${upstream.api_root}/v1\n    api_key_env: UP_KEY\n    models: { bench/echo: local/echo, bench/lorem: local/lorem }\n`);
  const child = spawn(process.execPath, [...(NODE_ARGS.get(bin) ?? []), ...nodeArgs, bin, 'serve', '--port', '0', '--state', join(STATE_ROOT, `${name}-state`), '--json', '--providers', file], { env: { ...process.env, UP_KEY: upstream.api_key }, stdio: ['ignore', 'pipe', 'ignore'] });
  // With --trace-gc (printed on stdout), the lines before and after the emulator's own are the trace.
  const trace = [];
  const info = JSON.parse(await new Promise((resolve) => {
    let found = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!found && line.startsWith('{')) resolve(line, (found = true));
      else trace.push(line);
    });
  }));
  await fetch(`${info.api_root}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${info.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1e6 }) });
  return { ...info, pid: child.pid, trace, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
}

/**
 * One chat request, its answer read to the end through undici's raw handler (its bytes counted, not
 * kept): resolves with its status. request()'s body stream cost the load generator a stream's
 * bookkeeping per chunk, on the same 2 cores as the processes it measures.
 */
export function hit(agent, target, body) {
  const url = new URL(`${target.api_root}/v1/chat/completions`);
  return new Promise((resolve, reject) => {
    let status = 0;
    let said = '';
    agent.dispatch(
      { origin: url.origin, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${target.api_key}`, 'content-type': 'application/json' }, body },
      {
        onRequestStart() {},
        onResponseStart(_, statusCode) { status = statusCode; },
        // A refusal's words kept (its first 300 bytes), for the error that stops the run to say why.
        onResponseData(_, chunk) { if (status !== 200 && said.length < 300) said += chunk.toString('utf8', 0, 300 - said.length); },
        onResponseEnd() { if (status !== 200) hit.said = said; resolve(status); },
        onResponseError(_, err) { reject(err); },
      },
    );
  });
}

/**
 * A kept-alive connection the server closes as a request goes out on it ("other side closed",
 * ECONNRESET: node's keep-alive timer firing late on a starved machine) is asked once more on a
 * new one, its time counted from the first try; `retried` counts them, reported with the rows.
 */
export const retried = new Map();
export async function hitOnce(agent, target, body) {
  try {
    return await hit(agent, target, body);
  } catch (err) {
    if (err?.code !== 'UND_ERR_SOCKET' && err?.code !== 'ECONNRESET') throw err;
    retried.set(target.api_root, (retried.get(target.api_root) ?? 0) + 1);
    return hit(agent, target, body);
  }
}

/**
 * The arrivals of a run: each side sent `perSecond` requests a second for `seconds`. Per request
 * (`sliceMs` 0): every side at once, request by request in turn (a side's i-th request 1/n of an
 * interval after the side before it's), each side at its rate; so a pause of the load generator or of
 * the upstream lands on the requests of every side in flight, alike. In slices (`sliceMs` > 0): one
 * side at a time for `sliceMs`, at its rate, the sides by turns. Yields `[ms from start, side index]`.
 */
export function* arrivals(sides, perSecond, seconds, sliceMs) {
  const n = sides.length;
  const count = Math.round(perSecond * seconds) * n;
  for (let i = 0; i < count; i++) {
    if (sliceMs > 0) yield [(i * 1000) / perSecond, Math.floor((i * 1000) / perSecond / sliceMs) % n];
    else yield [(i * 1000) / (perSecond * n), i % n];
  }
}

/**
 * Sends each arrival at its time: `send(side, planned)` (planned: performance.now()'s clock); resolves
 * when every request has ended. One timer at a time, each request made when due: made up front (a
 * closure and a timer for each of a run's arrivals at once, 15,000 in a 10 s run of gateway-tail) they
 * stalled the load generator 116 ms as the run began, its first requests all counted that late, on
 * whichever side a round began with.
 */
export async function sendAtTimes(sides, perSecond, seconds, sliceMs, send) {
  const t0 = performance.now() + 20;
  const pending = [];
  for (const [at, side] of arrivals(sides, perSecond, seconds, sliceMs)) {
    const wait = t0 + at - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = send(side, t0 + at);
    sent.catch(() => {}); // a failure is thrown by Promise.all below, not as unhandled while later ones wait
    pending.push(sent);
  }
  await Promise.all(pending);
}

/**
 * Milliseconds from each request's start to its last byte. Open loop: arrivals do not wait for answers,
 * and a request sent late (a busy load generator) counts from when it was due. One sent early counts
 * from when it was sent: node's timers fire up to ~1.5 ms before their time (their clock is the loop's,
 * cached and in whole ms), which made a direct call at 500/s look 0.1 ms long.
 */
async function openLoop(agent, sides, perSecond) {
  const times = sides.map(() => []);
  await sendAtTimes(sides, perSecond, SECONDS, SLICE_MS, async (side, planned) => {
    const { target, body } = sides[side];
    const start = Math.min(planned, performance.now());
    const status = await hitOnce(agent, target, body);
    if (status !== 200) throw new Error(`bench: HTTP ${status} from ${target.api_root}: ${hit.said}`);
    times[side].push(performance.now() - start);
  });
  return times;
}

/** `n` requests to one target at `perSecond`, open loop, untimed: load for the GC trace. */
async function paced(agent, target, body, perSecond, n) {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    const wait = t0 + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const status = await hit(agent, target, body);
    if (status !== 200) throw new Error(`bench: HTTP ${status} from ${target.api_root}`);
  }));
}

/** `n` requests to one target, `width` at a time. */
export async function closed(agent, target, body, width, n) {
  let sent = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (sent++ < n) await hit(agent, target, body);
  }));
}

/** Connections a chat request came on at the mock upstream so far (undefined for a `router serve` upstream). */
async function upstreamConnections(upstream) {
  if (UPSTREAM !== 'mock') return undefined;
  return (await (await fetch(`${upstream.api_root}/_mock/stats`)).json()).chat_connections;
}

/** Every collection of `--trace-gc-nvp` lines: bytes allocated since the one before, and the mark-compacts' count and pause. */
function collections(lines) {
  let allocated = 0;
  let compacts = 0;
  let compactPause = 0;
  for (const line of lines) {
    const kind = /\bgc=(\w+)/.exec(line)?.[1];
    if (!kind) continue;
    allocated += Number(/\ballocated=(\d+)/.exec(line)?.[1] ?? 0);
    if (kind === 'mc' || kind === 'ms') {
      compacts++;
      compactPause += Number(/\bpause=([\d.]+)/.exec(line)?.[1] ?? 0);
    }
  }
  return { allocated, compacts, compactPause };
}

/** The scavenges of `--trace-gc-nvp` lines: each one's pause (ms) and bytes survived (copied in the young generation, `new_space_survived` in node 20, or promoted). */
function scavenges(lines) {
  const out = [];
  for (const line of lines) {
    if (!/\bgc=s\b/.test(line)) continue;
    const field = (name) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    out.push({ pause: field('pause'), survived: field('new_space_survived') + field('semi_space_copied') + field('promoted'), promoted: field('promoted') });
  }
  return out;
}

/** Least squares: the slope of `ys` over `xs`. */
function slope(xs, ys) {
  const mx = xs.reduce((a, x) => a + x, 0) / xs.length;
  const my = ys.reduce((a, y) => a + y, 0) / ys.length;
  return xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
}

/**
 * The memory row (#43: "memory flat"), from the gateway's RSS sampled every 1% of the streams
 * (`[stream, MB]`). The RSS rises and falls with the collector's cycle (over 300,000 streams it went
 * between ~120 and ~160 MB: quarters 122, 143, 148, 130), so one sample at the end against one at 10%
 * judged wherever that cycle stood (1.30-1.32 at stop 57, 1.19 on the build before). Judged: the
 * peak of the last half against the peak of the second quarter (past the warm-up of the first): a
 * cycle shorter than a quarter reaches its top in both, a leak reaches higher in the later one. With
 * a deliberate leak of 1 KB per request (a module array), 1.78 (268 vs 151 MB); without, 1.01. A
 * cycle longer than a quarter cannot be told from growth in one run: BENCH_GATEWAY_STREAMS longer.
 * Printed beside it: the RSS at each quarter, the slope fitted after 25% (MB per 10,000 streams:
 * 13.3 with that leak, 0.1 without), and the old single-sample ratio. BENCH_GATEWAY_RSS_FILE: every
 * sample, `stream MB` a line.
 */
function reportMemory(samples) {
  const at = (from, to) => samples.filter(([i]) => i >= STREAMS * from && i < STREAMS * to).map(([, mb]) => mb);
  const peak = (from, to) => Math.max(...at(from, to));
  const end = samples.at(-1)[1];
  const warm = at(0.1, 1)[0];
  const quarters = [0.25, 0.5, 0.75].map((q) => samples.find(([i]) => i >= STREAMS * q)[1]).concat(end).map((mb) => mb.toFixed(0));
  const late = samples.filter(([i]) => i >= STREAMS / 4);
  const perTenK = slope(late.map(([i]) => i / 10_000), late.map(([, mb]) => mb));
  const ratio = peak(0.5, 1.01) / peak(0.25, 0.5);
  const streams = STREAMS.toLocaleString('en');
  report(`gateway RSS over ${streams} proxied streams: peak of last half / of 2nd quarter`, `${ratio.toFixed(2)} (${peak(0.5, 1.01).toFixed(0)} vs ${peak(0.25, 0.5).toFixed(0)} MB; at each quarter ${quarters.join(', ')} MB)`, '<= 1.1', ratio <= 1.1);
  report(`  slope after 25%, per 10,000 streams`, `${perTenK.toFixed(2)} MB`, 'info');
  report(`  end / after 10% (a single sample each: wherever the GC's cycle is)`, `${(end / warm).toFixed(2)} (${end.toFixed(0)} vs ${warm.toFixed(0)} MB)`, 'info');
}

export const gatewaySections = {
  /**
   * What each proxied request leaves alive for the young generation's collector (#43: the p99 is set by
   * scavenges): the gateway run with --trace-gc-nvp, BENCH_GATEWAY_GC_REQUESTS requests (default
   * 10,000) at 500/s, not streamed then streamed. Counts, not timing: steady on a busy machine.
   */
  async 'gateway-gc'() {
    const n = Number(process.env.BENCH_GATEWAY_GC_REQUESTS ?? 10_000);
    const upstream = await startUpstream('gateway-gc-upstream');
    report('upstream', UPSTREAM_WORDS, 'info');
    const gateway = await startGateway(upstream, BIN, 'gateway-gc', ['--trace-gc', '--trace-gc-nvp']);
    const agent = new Agent({ connections: 256 });
    try {
      // At 500/s, and 8 at a time: on a machine too busy to keep up with 500/s, requests wait in flight, and survive.
      for (const [stream, load] of [[false, 500], [false, 8], [true, 500], [true, 8]]) {
        const body = JSON.stringify({ model: stream ? 'bench/lorem' : 'bench/echo', stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
        const run = (count) => (load === 500 ? paced(agent, gateway, body, 500, count) : closed(agent, gateway, body, load, count));
        await run(2000);
        const from = gateway.trace.length;
        const connected = await upstreamConnections(upstream);
        await run(n);
        const opened = connected === undefined ? undefined : (await upstreamConnections(upstream)) - connected;
        const s = scavenges(gateway.trace.slice(from));
        const all = collections(gateway.trace.slice(from));
        const per10k = 10_000 / n;
        const kb = s.map((x) => x.survived / 1024);
        const what = `gateway scavenges, ${stream ? 'streamed' : 'not streamed'}, ${load === 500 ? '500/s' : `${load} at a time`}`;
        report(`${what}: count, pause per 10,000 requests`, `${(s.length * per10k).toFixed(0)}, ${(s.reduce((a, x) => a + x.pause, 0) * per10k).toFixed(1)} ms (longest ${Math.max(0, ...s.map((x) => x.pause)).toFixed(2)} ms)`, 'info', true);
        report(`${what}: KB survived per scavenge (median, max), per request`, `${med(kb)?.toFixed(0)}, ${Math.max(0, ...kb).toFixed(0)}; ${(kb.reduce((a, x) => a + x, 0) / n * 1024).toFixed(0)} B (${(s.reduce((a, x) => a + x.promoted, 0) / n).toFixed(0)} B promoted)`, 'info', true);
        report(`${what}: KB allocated per request; mark-compacts per 10,000 requests, their pause`, `${(all.allocated / n / 1024).toFixed(1)}; ${(all.compacts * per10k).toFixed(1)}, ${(all.compactPause * per10k).toFixed(1)} ms`, 'info', true);
        if (opened !== undefined) report(`${what}: upstream connections opened per 1,000 requests`, (opened * 1000 / n).toFixed(1), 'info', true);
      }
    } finally {
      await agent.close();
      await gateway.stop();
      await upstream.stop();
    }
  },

  async gateway() {
    const upstream = await startUpstream('gateway-upstream');
    report('upstream (direct and through the gateway alike)', UPSTREAM_WORDS, 'info');
    const gateway = await startGateway(upstream);
    const before = BEFORE ? await startGateway(upstream, BEFORE, 'gateway-before') : undefined;
    const kinds = [false, true].filter((stream) => rowWanted(stream, 100) || rowWanted(stream, 500));
    const relay = kinds.length ? await startGateway(upstream, join(ROOT, 'bench', 'bare-relay.mjs'), 'bare-relay') : undefined;
    const agent = new Agent({ connections: 256 });
    try {
      // Code warm before the first row: V8 was still optimizing the gateway's hot path (--trace-opt: 75,
      // 53, 53, 27, 28, 30, 9, 8 functions per 500 requests not streamed; 105, 45, 60, 29, 26, 15
      // streamed), so the 100/s rows, first in the run, measured code the 500/s rows found optimized.
      for (const target of [gateway, before, relay].filter(Boolean)) {
        for (const stream of kinds) await closed(agent, target, JSON.stringify({ model: stream ? 'bench/lorem' : 'bench/echo', stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] }), 8, WARM);
      }
      const priority = kinds.length ? raisePriority([process.pid, upstream.pid, gateway.pid, before?.pid, relay.pid].filter(Boolean)) : undefined;
      if (priority) report('latency rows measured under', priority.words, 'info');
      try {
        for (const stream of [false, true]) {
          for (const perSecond of [100, 500]) {
            if (!rowWanted(stream, perSecond)) continue;
            const ask = (model) => JSON.stringify({ model, stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
            // Each through side keeps the direct side's times of the windows it was measured in (`base`).
            const side = (target, model) => ({ into: [], base: [], target, body: ask(model) });
            const direct = side(upstream, stream ? 'local/lorem' : 'local/echo');
            const via = side(gateway, stream ? 'bench/lorem' : 'bench/echo');
            const viaBefore = before && side(before, stream ? 'bench/lorem' : 'bench/echo');
            const viaRelay = side(relay, stream ? 'bench/lorem' : 'bench/echo');
            const through = [via, viaBefore, viaRelay].filter(Boolean);
            // Per request (SLICE_MS 0): a window a through side, its requests and direct ones by turns, each
            // at the row's rate; in slices: every side in one window, as before.
            const windows = SLICE_MS > 0 ? [[direct, ...through]] : through.map((t) => [direct, t]);
            // One window of each unmeasured: connections opened (a first round measured seconds, not ms); code warm above.
            for (const sides of windows) await openLoop(agent, sides, perSecond);
            for (let round = 0; round < ROUNDS; round++) {
              // Each round starts with the next window, and each window with the next side: every side in
              // every place by turns. With a before side in slices, the two builds swap places every other
              // round: each follows direct, and precedes the relay, as often as the other (an A/A run, one
              // build in both, then differs only by noise; without the swap the worse p99s moved with the
              // place, not the build, 4 rows of 4).
              for (let w = 0; w < windows.length; w++) {
                const sides = windows[(w + round) % windows.length];
                const placed = before && SLICE_MS > 0 && round % 2 ? [sides[0], sides[2], sides[1], ...sides.slice(3)] : sides;
                const order = placed.map((_, i) => placed[(i + round) % placed.length]);
                const times = await openLoop(agent, order, perSecond);
                const base = times[order.indexOf(direct)];
                order.forEach((s, i) => s !== direct && (s.into.push(times[i]), s.base.push(base)));
              }
            }
            const how = SLICE_MS > 0 ? ` in ${SLICE_MS} ms slices by turns with direct` : ', per request by turns with direct';
            // #43 states its goal at 500/s. At 100/s every process sleeps between requests and each hop
            // wakes one: the whole path is slower, the direct call and the bare relay as much as the
            // gateway (docs/gateway-internals.md, Overhead). The 100/s rows are shown; the goal is not applied to them.
            const atGoalRate = perSecond === 500;
            const what = `gateway added latency, ${stream ? 'streamed' : 'not streamed'}, ${perSecond}/s${how}${atGoalRate ? '' : ' (goal stated at 500/s)'}`;
            for (const [p, goal] of [[0.5, 1], [0.99, 3]]) {
              const a = added(via.into, via.base, p);
              const label = `${what}: p${p * 100}`;
              // Met only when the pooled 90% interval is within the goal too: a median under it by chance is not shown met.
              const all = pooled(via.into, via.base, p);
              const noise = a.low < -goal ? '; noise wider than the goal: not shown met' : all.high > goal ? `; pooled 90% interval to ${all.high.toFixed(2)}: not shown met` : '';
              report(label, `${a.median.toFixed(2)} ms (${a.via.toFixed(2)} vs ${a.direct.toFixed(2)}; ${a.spread}${noise})`, atGoalRate ? `<= ${goal} ms` : 'info', a.median <= goal && !noise);
              report(`  pooled over the rounds, by rounds resampled`, interval(all), 'info');
              if (before) {
                const b = added(viaBefore.into, viaBefore.base, p);
                report(`  the same through BENCH_GATEWAY_BEFORE`, `${b.median.toFixed(2)} ms (${b.via.toFixed(2)} vs ${b.direct.toFixed(2)}; ${b.spread})`, 'info');
                report(`    pooled; this build minus BENCH_GATEWAY_BEFORE, pooled`, `${interval(pooled(viaBefore.into, viaBefore.base, p))}; ${interval(pooled(via.into, viaBefore.into, p))}`, 'info');
              }
              const r = added(viaRelay.into, viaRelay.base, p);
              report(`  the same through a bare relay (bench/bare-relay.mjs)`, `${r.median.toFixed(2)} ms (${r.via.toFixed(2)} vs ${r.direct.toFixed(2)}; ${r.spread}); the gateway ${(a.median - r.median).toFixed(2)} ms beyond it`, 'info');
              report(`    pooled; the gateway minus the bare relay, pooled`, `${interval(pooled(viaRelay.into, viaRelay.base, p))}; ${interval(pooled(via.into, viaRelay.into, p))}`, 'info');
            }
            if (retried.size) {
              const count = (t) => retried.get(t.api_root) ?? 0;
              report(`  asked again after a closed kept-alive connection (direct, gateway${before ? ', before' : ''}, bare relay)`, [direct, ...through].map((s) => count(s.target)).join(', '), 'info');
              retried.clear();
            }
          }
        }
      } finally {
        priority?.restore();
      }
      if (ROWS && !ROWS.includes('memory') && !ROWS.includes('cpu')) return;
      // CPU per request: the gateway's (parse, route, proxy, relay) beside the upstream's (the answer itself).
      // BENCH_GATEWAY_CPU requests per target (default 4,000), 16 at a time, in 8 blocks; the targets' blocks
      // by turns (each block begun by the next target): all see the machine alike. Each row gives the
      // median block and the blocks' range beside the whole run's mean.
      const cpuRows = [];
      const perTarget = Number(process.env.BENCH_GATEWAY_CPU ?? 4000);
      const blocks = 8;
      // `cpu` among BENCH_GATEWAY_ROWS: the CPU rows of the kinds its latency rows name (an A/B of CPU alone: `streamed-500,cpu`).
      for (const stream of !ROWS ? [false, true] : ROWS.includes('cpu') ? kinds : []) {
        // The bare relay's beside them: what any relay in node costs per request here, the floor of the gateway's.
        const targets = [[gateway, 'gateway'], ...(before ? [[before, '  BENCH_GATEWAY_BEFORE']] : []), ...(relay ? [[relay, '  bare relay']] : [])].map(([target, label]) => ({ target, label, g: 0, u: 0, l: 0, n: 0, blocks: [] }));
        const body = JSON.stringify({ model: stream ? 'bench/lorem' : 'bench/echo', stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
        for (let block = 0; block < blocks; block++) {
          for (const t of targets.map((_, i) => targets[(i + block) % targets.length])) {
            const n = Math.round(perTarget / blocks);
            let sent = 0;
            const g0 = cpuMicros(t.target.pid);
            const u0 = cpuMicros(upstream.pid);
            const l0 = cpuMicros(process.pid);
            await Promise.all(Array.from({ length: 16 }, async () => {
              while (sent++ < n) await hit(agent, t.target, body);
            }));
            t.blocks.push((cpuMicros(t.target.pid) - g0) / n);
            t.g += cpuMicros(t.target.pid) - g0;
            t.u += cpuMicros(upstream.pid) - u0;
            t.l += cpuMicros(process.pid) - l0;
            t.n += n;
          }
        }
        for (const { label, g, u, l, n, blocks: each } of targets) {
          cpuRows.push([`${label} CPU per proxied request, ${stream ? 'streamed' : 'not streamed'}`, `${(g / n).toFixed(0)} µs (upstream ${(u / n).toFixed(0)} µs: ${(g / u).toFixed(2)}x; load generator ${(l / n).toFixed(0)} µs; blocks' median ${med(each).toFixed(0)}, ${Math.min(...each).toFixed(0)} to ${Math.max(...each).toFixed(0)})`]);
        }
      }
      for (const [name, value] of cpuRows) report(name, value, 'info', true);
      if (ROWS && !ROWS.includes('memory')) return;
      // Memory over many proxied streams, 32 at a time: flat once warm.
      const body = JSON.stringify({ model: 'bench/lorem', stream: true, messages: [{ role: 'user', content: 'write 20 words' }] });
      const every = Math.max(1, Math.floor(STREAMS / 100));
      const samples = [];
      let next = 0;
      const one = async () => {
        while (next < STREAMS) {
          const i = next++;
          if (i % every === 0) samples.push([i, rssMB(gateway.pid)]);
          await hit(agent, gateway, body);
        }
      };
      await Promise.all(Array.from({ length: 32 }, one));
      samples.push([STREAMS, rssMB(gateway.pid)]);
      if (process.env.BENCH_GATEWAY_RSS_FILE) writeFileSync(process.env.BENCH_GATEWAY_RSS_FILE, samples.map(([i, mb]) => `${i} ${mb.toFixed(1)}`).join('\n') + '\n');
      reportMemory(samples);
    } finally {
      await agent.close();
      await before?.stop();
      await relay?.stop();
      await gateway.stop();
      await upstream.stop();
    }
  },
};

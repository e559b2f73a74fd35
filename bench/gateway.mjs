// The gateway's overhead (#43): added latency of a chat call through `router serve --providers` vs the same
// call straight to its upstream (another `router serve`), at fixed arrival rates, streamed and not; and the
// gateway's RSS over many proxied streams. BENCH_GATEWAY_SECONDS sets each round's length (default 2),
// BENCH_GATEWAY_STREAMS the streams of the memory run (default 100,000).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { BIN, WORK, startEmulator, report } from './lib.mjs';

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_GATEWAY_SECONDS ?? 2);
const STREAMS = Number(process.env.BENCH_GATEWAY_STREAMS ?? 100_000);
const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
/** CPU time (user + system) a process has used, in microseconds: per request, it shrugs off a machine busy with others. */
const cpuMicros = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function startGateway(upstream) {
  const file = join(WORK, 'gateway-providers.yaml');
  writeFileSync(file, `providers:\n  - name: up\n    base_url: ${upstream.api_root}/v1\n    api_key_env: UP_KEY\n    models: { bench/echo: local/echo, bench/lorem: local/lorem }\n`);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', join(WORK, 'gateway-state'), '--json', '--providers', file], { env: { ...process.env, UP_KEY: upstream.api_key }, stdio: ['ignore', 'pipe', 'ignore'] });
  const info = JSON.parse(await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve)));
  await fetch(`${info.api_root}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${info.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1e6 }) });
  return { ...info, pid: child.pid, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
}

/** Milliseconds from each request's planned start (open loop: arrivals do not wait for answers) to its last byte. */
async function openLoop(agent, target, body, perSecond) {
  const count = Math.round(perSecond * SECONDS);
  const t0 = performance.now() + 20;
  const times = [];
  await Promise.all(Array.from({ length: count }, async (_, i) => {
    const planned = t0 + (i * 1000) / perSecond;
    const wait = planned - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const res = await request(`${target.api_root}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${target.api_key}`, 'content-type': 'application/json' }, body });
    for await (const _chunk of res.body) { /* read to the end */ }
    if (res.statusCode !== 200) throw new Error(`bench: HTTP ${res.statusCode} from ${target.api_root}`);
    times.push(performance.now() - planned);
  }));
  return times;
}

export const gatewaySections = {
  async gateway() {
    const upstream = await startEmulator(join(WORK, 'gateway-upstream'));
    const gateway = await startGateway(upstream);
    const agent = new Agent({ connections: 256 });
    try {
      for (const stream of [false, true]) {
        for (const perSecond of [100, 500]) {
          const ask = (model) => JSON.stringify({ model, stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
          // One round each unmeasured: connections opened, code warm (a first round measured seconds, not ms).
          await openLoop(agent, upstream, ask(stream ? 'local/lorem' : 'local/echo'), perSecond);
          await openLoop(agent, gateway, ask(stream ? 'bench/lorem' : 'bench/echo'), perSecond);
          const direct = [];
          const via = [];
          for (let round = 0; round < ROUNDS; round++) {
            direct.push(...(await openLoop(agent, upstream, ask(stream ? 'local/lorem' : 'local/echo'), perSecond)));
            via.push(...(await openLoop(agent, gateway, ask(stream ? 'bench/lorem' : 'bench/echo'), perSecond)));
          }
          const p50 = pct(via, 0.5) - pct(direct, 0.5);
          const p99 = pct(via, 0.99) - pct(direct, 0.99);
          const what = `gateway added latency, ${stream ? 'streamed' : 'not streamed'}, ${perSecond}/s`;
          report(`${what}: p50`, `${p50.toFixed(2)} ms (${pct(via, 0.5).toFixed(2)} vs ${pct(direct, 0.5).toFixed(2)})`, '<= 1 ms', p50 <= 1);
          report(`${what}: p99`, `${p99.toFixed(2)} ms (${pct(via, 0.99).toFixed(2)} vs ${pct(direct, 0.99).toFixed(2)})`, '<= 3 ms', p99 <= 3);
        }
      }
      // CPU per request: the gateway's (parse, route, proxy, relay) beside the upstream's (the answer itself).
      for (const stream of [false, true]) {
        const body = JSON.stringify({ model: stream ? 'bench/lorem' : 'bench/echo', stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
        const n = 4000;
        let sent = 0;
        const g0 = cpuMicros(gateway.pid);
        const u0 = cpuMicros(upstream.pid);
        await Promise.all(Array.from({ length: 16 }, async () => {
          while (sent++ < n) {
            const res = await request(`${gateway.api_root}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${gateway.api_key}`, 'content-type': 'application/json' }, body });
            for await (const _chunk of res.body) { /* read to the end */ }
          }
        }));
        const g = (cpuMicros(gateway.pid) - g0) / n;
        const u = (cpuMicros(upstream.pid) - u0) / n;
        report(`gateway CPU per proxied request, ${stream ? 'streamed' : 'not streamed'}`, `${g.toFixed(0)} µs (upstream ${u.toFixed(0)} µs)`, 'info', true);
      }
      // Memory over many proxied streams, 32 at a time: flat once warm.
      const body = JSON.stringify({ model: 'bench/lorem', stream: true, messages: [{ role: 'user', content: 'write 20 words' }] });
      let next = 0;
      let warm = 0;
      const one = async () => {
        while (next < STREAMS) {
          const i = next++;
          if (i === Math.floor(STREAMS / 10)) warm = rssMB(gateway.pid);
          const res = await request(`${gateway.api_root}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${gateway.api_key}`, 'content-type': 'application/json' }, body });
          for await (const _chunk of res.body) { /* read to the end */ }
        }
      };
      await Promise.all(Array.from({ length: 32 }, one));
      const end = rssMB(gateway.pid);
      report(`gateway RSS over ${STREAMS.toLocaleString('en')} proxied streams: end / after 10%`, `${(end / warm).toFixed(2)} (${end.toFixed(0)} vs ${warm.toFixed(0)} MB)`, '<= 1.2', end / warm <= 1.2);
    } finally {
      await agent.close();
      await gateway.stop();
      await upstream.stop();
    }
  },
};

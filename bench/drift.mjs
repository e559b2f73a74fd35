// The emulator's capacity over time (#32): requests/s at 64 connections fresh, and again after K mixed requests
// (chat streamed and not, Responses, embeddings, speech, batches, listings), each as a ratio to a bare node:http
// server measured in the same rounds. BENCH_DRIFT_REQUESTS sets K, BENCH_DRIFT_LEGS how many times it is repeated.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { Agent, request } from 'undici';
import { WORK, startEmulator, median, rate, report } from './lib.mjs';

/** CPU time (user + system) a process has used, in microseconds: per request, it shrugs off a machine busy with others. */
const cpuMicros = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const spread = (xs) => `spread ${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;

/** One request of the mix, chosen by `i`: mostly chat, as a day of scripts makes them; each kind kept small. */
export function mixedRequest(emu, i) {
  const api = (path, body, key = emu.api_key) => ({ path, key, body: body === undefined ? undefined : JSON.stringify(body) });
  const say = `request ${i}: say something short`;
  switch (i % 16) {
    case 0: case 1: case 2: case 3:
      return api('/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: say }] });
    case 4: case 5: case 6:
      return api('/v1/chat/completions', { model: 'local/lorem', stream: true, messages: [{ role: 'user', content: `write ${100 + (i % 7) * 50} words` }] });
    case 7:
      return api('/v1/responses', { model: 'local/echo', input: say });
    case 8:
      return api('/v1/responses', { model: 'local/lorem', stream: true, input: 'write 150 words' });
    case 9:
      return api('/v1/embeddings', { model: 'local/embed', input: [say, `${say} again`] });
    case 10:
      return api('/v1/audio/speech', { model: 'local/tts', voice: 'alloy', input: say, response_format: 'mp3' }, emu.management_key);
    case 11:
      return api('/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: [0, 1, 2].map((n) => ({ custom_id: `r${n}`, body: { messages: [{ role: 'user', content: `${say} ${n}` }] } })) });
    case 12:
      return api('/v1/batches?limit=20');
    case 13:
      return api('/v1/models');
    case 14:
      return api('/v1/key');
    default:
      return api('/v1/credits', undefined, emu.management_key);
  }
}

/** Sends `count` requests of the mix, `concurrency` at a time; every answer read whole, any failure thrown. */
export async function mixedTraffic(emu, count, { concurrency = 8, from = 0 } = {}) {
  let next = from;
  const end = from + count;
  // A pool of its own: sockets left idle by an earlier leg have been closed by the server since.
  const dispatcher = new Agent({ connections: concurrency });
  const worker = async () => {
    while (next < end) {
      const { path, key, body } = mixedRequest(emu, next++);
      const res = await request(`${emu.api_root}${path}`, { dispatcher, method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      await res.body.arrayBuffer();
      if (res.statusCode >= 300) throw new Error(`mixed traffic: ${path} answered ${res.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await dispatcher.close();
  }
}

/**
 * Emulator / bare node:http requests/s at 64 connections for 3 s, in `rounds` interleaved pairs: the per-round
 * ratios, and the emulator's CPU time per request in each round.
 */
function capacity(emu, bareUrl, rounds) {
  const headers = { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hello there' }] });
  const ratios = [];
  const cpu = [];
  for (let i = 0; i < rounds; i++) {
    const b = rate(bareUrl, headers, body);
    const before = cpuMicros(emu.pid);
    const e = rate(`${emu.api_root}/v1/chat/completions`, headers, body);
    cpu.push((cpuMicros(emu.pid) - before) / (e * 3));
    ratios.push(e / b);
    if (process.env.BENCH_DEBUG) console.log(`      round ${i}: bare ${b.toFixed(0)}/s, emulator ${e.toFixed(0)}/s, ${cpu.at(-1).toFixed(1)} us CPU a request`);
  }
  return { ratios, cpu };
}

export const driftSections = {
  async drift() {
    const requests = Number(process.env.BENCH_DRIFT_REQUESTS ?? 30_000);
    const legs = Number(process.env.BENCH_DRIFT_LEGS ?? 2);
    const emu = await startEmulator(join(WORK, 'drift-state'));
    const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hello there' }] });
    const canned = await (await fetch(`${emu.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' }, body })).text();
    const bare = spawn(process.execPath, ['-e', `const b=${JSON.stringify(canned)};require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(b)})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const bareUrl = `http://127.0.0.1:${await new Promise((r) => bare.stdout.once('data', (c) => r(String(c).trim())))}/`;
    try {
      // Both warmed first (JIT, pools): the fresh figure is a running server's, not its first second's.
      rate(bareUrl, {}, body, 2);
      rate(`${emu.api_root}/v1/chat/completions`, { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' }, body, 2);
      const fresh = capacity(emu, bareUrl, 5);
      let late = fresh;
      for (let leg = 1; leg <= legs; leg++) {
        const t0 = performance.now();
        await mixedTraffic(emu, requests, { from: (leg - 1) * requests });
        const s = (performance.now() - t0) / 1000;
        late = capacity(emu, bareUrl, 5);
        console.log(`      after ${(leg * requests).toLocaleString('en-US')} mixed requests (${(requests / s).toFixed(0)}/s): ${median(late.ratios).toFixed(2)} (${spread(late.ratios)}), ${median(late.cpu).toFixed(1)} us CPU a request, RSS ${rssMB(emu.pid).toFixed(0)} MB`);
      }
      const [early, after] = [median(fresh.ratios), median(late.ratios)];
      const [cpuEarly, cpuLate] = [median(fresh.cpu), median(late.cpu)];
      report('emulator req/s at 64 connections / bare node:http, fresh', `${early.toFixed(2)} (${spread(fresh.ratios)})`, '>= 0.5', early >= 0.5);
      report(`  the same after ${(legs * requests).toLocaleString('en-US')} mixed requests`, `${after.toFixed(2)} (${spread(late.ratios)})`, '>= 0.5', after >= 0.5);
      report('  emulator CPU a request, late / fresh (drift)', `${(cpuLate / cpuEarly).toFixed(2)} (${cpuLate.toFixed(1)} vs ${cpuEarly.toFixed(1)} us)`, '<= 1.1', cpuLate / cpuEarly <= 1.1);
      report('  req/s ratio, late / fresh', `${(after / early).toFixed(2)}`, 'info');
    } finally {
      bare.kill();
      await emu.stop();
    }
  },
};

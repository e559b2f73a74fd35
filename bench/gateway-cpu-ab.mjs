// An A/B of the gateway's CPU a request (#43): another build's gateway (a checkout of an older commit,
// its launcher the first argument) and this one's, on one mock upstream, driven at the same time, so a
// machine busy with others slows both alike. CPU, not latency: each gateway's threads' run time from
// /proc/<pid>/task/*/schedstat (nanoseconds; /proc/<pid>/stat counts 10 ms ticks, ~4% of a block).
//   node bench/gateway-cpu-ab.mjs BEFORE_LAUNCHER [plain|streamed] [blocks, 30] [requests a block, 500]
// Each block sends each gateway its requests, 8 in flight each, and pairs the two CPU figures. Which
// gateway's requests go out first alternates by block: with the same one first every block, an A/A run
// (one build on both sides) read the second 42 µs a stream cheaper (streamed, 30 x 250), on no code at
// all; alternated, -4 µs. Not streamed, an A/A run read -1 µs. Prints each side's median block, the
// paired differences' median and range, and each block. A block's CPU moves with the load (with ~8% of
// blocks 1.5x the median): a difference shows by its median over many blocks, not by one block.
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { BIN } from './lib.mjs';
import { closed, startGateway, startUpstream } from './gateway.mjs';

const [before, kind = 'plain', blockCount = '30', perBlockText = '500'] = process.argv.slice(2);
if (!before) {
  process.stderr.write('usage: node bench/gateway-cpu-ab.mjs BEFORE_LAUNCHER [plain|streamed] [blocks] [requests a block]\n');
  process.exit(2);
}
const stream = kind === 'streamed';
const blocks = Number(blockCount);
const perBlock = Number(perBlockText);

/** A process's CPU time so far, in microseconds: every thread's run time (a thread that ended is not counted). */
function cpuMicros(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const upstream = await startUpstream('cpu-ab-upstream');
const sides = [
  { label: 'before', gateway: await startGateway(upstream, before, 'cpu-ab-before'), each: [] },
  { label: 'this build', gateway: await startGateway(upstream, BIN, 'cpu-ab-after'), each: [] },
];
const agent = new Agent({ connections: 256 });
const body = JSON.stringify({ model: stream ? 'bench/lorem' : 'bench/echo', stream, messages: [{ role: 'user', content: stream ? 'write 20 words' : 'hi' }] });
try {
  // Code warm first (as the gateway bench's rows: V8 still optimizing the hot path for ~3,000 requests).
  for (const { gateway } of sides) await closed(agent, gateway, body, 8, 3000);
  for (let block = 0; block < blocks; block++) {
    const order = block % 2 ? [sides[1], sides[0]] : sides;
    const from = order.map(({ gateway }) => cpuMicros(gateway.pid));
    await Promise.all(order.map(({ gateway }) => closed(agent, gateway, body, 8, perBlock)));
    order.forEach((side, i) => side.each.push((cpuMicros(side.gateway.pid) - from[i]) / perBlock));
  }
  const what = `${stream ? 'streamed' : 'not streamed'}, ${blocks} blocks of ${perBlock}`;
  for (const { label, each } of sides) {
    console.log(`${label}: CPU a request, ${what}: median ${median(each).toFixed(0)} µs (${Math.min(...each).toFixed(0)} to ${Math.max(...each).toFixed(0)}) [${each.map((x) => x.toFixed(0)).join(' ')}]`);
  }
  const diffs = sides[1].each.map((after, i) => after - sides[0].each[i]);
  console.log(`this build minus before, per block: median ${median(diffs).toFixed(0)} µs (${Math.min(...diffs).toFixed(0)} to ${Math.max(...diffs).toFixed(0)})`);
} finally {
  await agent.close();
  for (const { gateway } of sides) await gateway.stop();
  await upstream.stop();
}

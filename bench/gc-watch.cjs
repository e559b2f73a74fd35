'use strict';
// A preload (`node --require bench/gc-watch.cjs`) for `npm run bench -- gateway-tail`: writes what paused
// this process, with wall-clock times (ms since the epoch, as the load generator's), to
// $GC_WATCH_DIR/<pid>.jsonl, one `[kind, start, ms, detail]` a line: each collection (`gc`, its
// perf_hooks kind: 1 scavenge, 4 mark-compact, 8 incremental marking), each turn of the event loop
// that came more than 2.5 ms after the one before (`stall`: a 1 ms interval timer's late wake-up), and
// each open() and rename() of fs.promises (a state save; the journal's next segment), and each second
// the event loop's delay as perf_hooks.monitorEventLoopDelay saw it (`eld`, its max and p99 in ms).
const { PerformanceObserver, monitorEventLoopDelay, performance } = require('node:perf_hooks');
const fs = require('node:fs');

const file = `${process.env.GC_WATCH_DIR}/${process.pid}.jsonl`;
const origin = performance.timeOrigin;
const at = (ms) => (origin + ms).toFixed(3);
let lines = [];

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) lines.push(`["gc",${at(e.startTime)},${e.duration.toFixed(3)},${e.detail.kind}]`);
}).observe({ entryTypes: ['gc'] });

let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > 2.5) lines.push(`["stall",${at(last)},${(now - last).toFixed(3)},0]`);
  last = now;
}, 1).unref();

for (const name of ['open', 'rename']) {
  const original = fs.promises[name];
  fs.promises[name] = function (...args) {
    lines.push(`["${name}",${at(performance.now())},0,${JSON.stringify(String(args[0]).split('/').pop())}]`);
    return original.apply(this, args);
  };
}

// File calls of libuv's thread pool (callback forms) that took over 1 ms from call to callback (`io`, the
// call's name): a charge's write(2) that an answer's end waited for (before it was written on the loop), a state save's fsync.
for (const name of ['write', 'writev', 'fsync', 'fdatasync', 'open', 'close', 'rename']) {
  const original = fs[name];
  fs[name] = function (...args) {
    const done = args.at(-1);
    if (typeof done !== 'function') return original.apply(this, args);
    const start = performance.now();
    args[args.length - 1] = function (...results) {
      const ms = performance.now() - start;
      if (ms > 1) lines.push(`["io",${at(start)},${ms.toFixed(3)},"${name}"]`);
      return done.apply(this, results);
    };
    return original.apply(this, args);
  };
}

// And writeSync on the event loop over 1 ms (`io`, "writeSync"): a journal's lines written as an answer ends.
const writeSync = fs.writeSync;
fs.writeSync = function (...args) {
  const start = performance.now();
  try {
    return writeSync.apply(this, args);
  } finally {
    const ms = performance.now() - start;
    if (ms > 1) lines.push(`["io",${at(start)},${ms.toFixed(3)},"writeSync"]`);
  }
};

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();

const flush = () => {
  if (delay.count) lines.push(`["eld",${at(performance.now())},${(delay.max / 1e6).toFixed(3)},${(delay.percentile(99) / 1e6).toFixed(3)}]`);
  delay.reset();
  if (!lines.length) return;
  const text = `${lines.join('\n')}\n`;
  lines = [];
  try {
    fs.appendFileSync(file, text);
  } catch {
    // The folder gone: the bench read what it wanted and is ending.
  }
};
setInterval(flush, 1000).unref();
process.on('exit', flush);

'use strict';
// A preload (`node --require bench/gc-watch.cjs`) for `npm run bench -- gateway-tail`: writes what paused
// this process, with wall-clock times (ms since the epoch, as the load generator's), to
// $GC_WATCH_DIR/<pid>.jsonl, one `[kind, start, ms, detail]` a line: each collection (`gc`, its
// perf_hooks kind: 1 scavenge, 4 mark-compact, 8 incremental marking), each turn of the event loop
// that came more than 2.5 ms after the one before (`stall`: a 1 ms interval timer's late wake-up), and
// each open() and rename() of fs.promises (a state save; the journal's next segment).
const { PerformanceObserver, performance } = require('node:perf_hooks');
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

const flush = () => {
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

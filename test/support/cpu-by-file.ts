// Opt-in (vitest.cpu.config.ts): appends each test file's CPU seconds (this worker and the children it
// waited for, from /proc/self/stat) to $TEST_CPU_LOG, to find which files the suite's CPU goes to.
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

const cpuSeconds = (): number => {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
};

let start = cpuSeconds();
beforeAll(() => {
  start = Math.min(start, cpuSeconds());
});
// The suite is the second argument; vitest asks that the first (the context) be a destructuring pattern.
// eslint-disable-next-line no-empty-pattern
afterAll(({}, suite) => {
  const file = suite.file.filepath;
  appendFileSync(process.env.TEST_CPU_LOG ?? '/dev/null', `${(cpuSeconds() - start).toFixed(2)}\t${file}\n`);
});

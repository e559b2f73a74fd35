// Opt-in (vitest.cpu.config.ts): the CPU seconds of vitest's own process (not its workers), at the end.
import { appendFileSync } from 'node:fs';

export default function setup(): () => void {
  return () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(process.env.TEST_CPU_LOG ?? '/dev/null', `${((user + system) / 1e6).toFixed(2)}\t(vitest main process)\n`);
  };
}

/**
 * CPU time this process spends while `work` runs, in ms. A test whose emulator runs in process
 * bounds this, not the wall time: the wall time grows with the machine's load (eight test
 * workers on two cores), the CPU time of a block that stalls the other clients does not.
 */
export async function cpuMsDuring<T>(work: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(before);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

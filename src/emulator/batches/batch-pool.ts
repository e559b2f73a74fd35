/**
 * Runs `work` on the items of `items` with at most `limit` of them in flight at once, in their order
 * of arrival. `work` answers false to stop taking new items. Whether it stops or throws, the items in
 * flight finish before this returns (or throws the first error): nothing runs on after it.
 */
export async function inPool<T>(items: AsyncIterable<T>, limit: number, work: (item: T) => Promise<boolean>): Promise<void> {
  const source = items[Symbol.asyncIterator]();
  let stop = false;
  const worker = async () => {
    try {
      while (!stop) {
        // Several workers may wait on the same iterator: an async generator answers them in turn.
        const next = await source.next();
        if (next.done || stop) return;
        if (!(await work(next.value))) stop = true;
      }
    } catch (err) {
      stop = true;
      throw err;
    }
  };
  const ended = await Promise.allSettled(Array.from({ length: Math.max(1, limit) }, worker));
  await source.return?.(undefined);
  const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failed) throw failed.reason;
}

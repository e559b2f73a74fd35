import { Hash } from 'node:crypto';

/**
 * Bytes this process gives to any hash (createHash's update) while `work` runs: a count of the hashing a request
 * made, for a test whose emulator runs in process. Each update still goes to the hash unchanged.
 */
export async function bytesHashedDuring<T>(work: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  const update = Hash.prototype.update;
  let bytes = 0;
  const counted = function (this: Hash, ...args: [string | NodeJS.ArrayBufferView, BufferEncoding?]) {
    const [data, encoding] = args;
    bytes += typeof data === 'string' ? Buffer.byteLength(data, encoding) : data.byteLength;
    return (update as (...a: typeof args) => Hash).apply(this, args);
  };
  Hash.prototype.update = counted as typeof update;
  try {
    return { value: await work(), bytes };
  } finally {
    Hash.prototype.update = update;
  }
}

import { randomFillSync } from 'node:crypto';

/**
 * Random hex for ids and keys, from the system's CSPRNG filled 4 KiB at a time: one
 * randomBytes() call per id cost the emulator ~8% of its time under load.
 */
const pool = Buffer.alloc(4096);
let at = pool.length;

export function randomHex(bytes: number): string {
  if (at + bytes > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const hex = pool.toString('hex', at, at + bytes);
  at += bytes;
  return hex;
}

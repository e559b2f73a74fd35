/**
 * Random bytes as hex, for names that must not collide but need not be secret (temp files,
 * conversation ids): Math.random, because node:crypto costs ~2.5 ms of a start to load, and even
 * the global crypto.getRandomValues loads it.
 */
export function randomHex(bytes: number): string {
  let hex = '';
  for (let i = 0; i < bytes; i++) hex += Math.floor(Math.random() * 256).toString(16).padStart(2, '0');
  return hex;
}

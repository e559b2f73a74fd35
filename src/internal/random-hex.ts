import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Random bytes as hex. node:crypto (~5 ms to load) is loaded on the first call, not at start. */
export function randomHex(bytes: number): string {
  return (require('node:crypto') as typeof import('node:crypto')).randomBytes(bytes).toString('hex');
}

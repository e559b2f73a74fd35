import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Settlements (`r`) written to a state folder's charge journal segments (charge-journal.ts). */
export const settlementsOnDisk = (dir: string): number =>
  readdirSync(dir)
    .filter((n) => /^charges(\.\d+)?\.jsonl$/.test(n))
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean))
    .filter((line) => line.includes('"r":')).length;

import type { IO } from './io.js';

/**
 * The one warning of a listing that leaves out an entry whose file is damaged (a fragment, a conversation,
 * a collection, a job): the file named, on stderr even when piped; the listing goes on (exit 0).
 */
export function leftOutDamaged(io: IO, file: string, how = 'fix it or move it away'): void {
  io.note(`warning: ${file} is damaged and left out (${how})`);
}

import { describeSystemError, isSystemError } from '../../internal/system-errors.js';

/** Codes of a disk that takes no more (full, over quota, read-only, failing), rather than a bug of ours. */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** The words for a failed write of the emulator's state, or undefined for any other failure. */
export function storageFailure(err: unknown): string | undefined {
  if (!isSystemError(err) || !(STORAGE_CODES.has(err.code) || (err.syscall === 'write' && err.path !== undefined))) return undefined;
  return describeSystemError(err);
}

/** What was said since writes last worked: each once, however often it happens again. */
const said = new Set<string>();

/** Says on stderr, once until writes work again, that the emulator cannot write its state and what it does meanwhile. */
export function reportStorage(why: string, meanwhile: string): void {
  if (said.has(why)) return;
  said.add(why);
  process.stderr.write(`emulator: ${why}; ${meanwhile}\n`);
}

/** A failure was said and no write worked since. */
export function storageFailing(): boolean {
  return said.size > 0;
}

/** A write worked: said once, if a failure was said before. */
export function storageSaved(): void {
  if (said.size) process.stderr.write('emulator: its state is saved again\n');
  said.clear();
}

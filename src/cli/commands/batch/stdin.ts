/** `batch create -` (or a pipe named as a file, `<(cmd)`): its bytes spooled to a private temp file, read twice (checked, then sent). */
import { BATCH_MAX_BYTES } from '../../../client/facts.js';
import { processAlive } from '../../../internal/process.js';
import { usage } from '../../exit-codes.js';
import { limitBytes } from '../../io/bounded-read.js';
import type { InStream } from '../../io/io.js';
import { refuseFolderStdin } from '../../io/read-stdin.js';

const SPOOL_PREFIX = 'router-batch-stdin-';
/** Twice a batch's limit (lines with method and url, spaces): more stdin cannot be one batch. */
const SPOOL_MAX_BYTES = 2 * BATCH_MAX_BYTES;

/** Stdin as it passes to the spool, refused past SPOOL_MAX_BYTES (`< /dev/zero` would fill the disk). */
const bounded = (what: string) => (source: AsyncIterable<Buffer>) =>
  limitBytes(source, SPOOL_MAX_BYTES, () => usage(`${what} holds more than ${SPOOL_MAX_BYTES / 1_000_000} MB, more than one batch takes: save it to a file and run "router batch run FILE", which splits it`));

/** Copies stdin to a private temp file (it is read twice: checked, then sent); removed on every exit path. */
export async function spoolStdin(stdin: InStream, signal?: AbortSignal): Promise<{ path: string; cleanup: () => void }> {
  await refuseFolderStdin(stdin);
  return spool(stdin, 'stdin', signal);
}

/** The same for a pipe or device named as a file (`batch create <(cmd)`). */
export async function spoolPiped(file: string, signal?: AbortSignal): Promise<{ path: string; cleanup: () => void }> {
  const { statSync } = await import('node:fs');
  const { namedFileStream } = await import('../../../internal/named-input.js');
  return spool(await namedFileStream(file, statSync(file)), file, signal);
}

async function spool(source: AsyncIterable<Buffer>, what: string, signal?: AbortSignal): Promise<{ path: string; cleanup: () => void }> {
  const { mkdtempSync, createWriteStream, readdirSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pipeline } = await import('node:stream/promises');
  // Spools of runs that were killed (kill -9 leaves no chance to clean up) go on the next run.
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(SPOOL_PREFIX))) {
    const pid = Number(name.slice(SPOOL_PREFIX.length).split('-')[0]);
    if (pid && pid !== process.pid && !processAlive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(tmpdir(), `${SPOOL_PREFIX}${process.pid}-`));
  const path = join(dir, 'stdin.jsonl');
  const cleanup = () => {
    process.off('exit', cleanup);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanup);
  try {
    await pipeline(source, bounded(what), createWriteStream(path, { mode: 0o600 }), { signal });
  } catch (err) {
    cleanup();
    throw err;
  }
  return { path, cleanup };
}

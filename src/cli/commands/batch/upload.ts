import { BATCH_MAX_BYTES } from '../../../client/facts.js';
import { processAlive } from '../../../internal/process.js';
import { usage } from '../../exit-codes.js';
import { limitBytes } from '../../bounded-read.js';
import type { Scan } from './scan.js';
import type { InStream } from '../../io.js';
import { refuseFolderStdin } from '../../run.js';

const PIECE_BYTES = 256 * 1024;

/**
 * Request lines as JSON array elements, comma-separated, in 256 KiB pieces; a line that is not
 * exactly {custom_id, body} (it has method and url) is reduced to those two.
 */
export async function* arrayPieces(lines: AsyncIterable<Buffer | Buffer[]>, plain: boolean): AsyncIterable<Uint8Array> {
  const COMMA = Buffer.from(',');
  let out: Buffer[] = [];
  let size = 0;
  let first = true;
  for await (const bytes of lines) {
    // An element may come in pieces (sent one after the other, never joined first).
    let items = Array.isArray(bytes) ? bytes : [bytes];
    if (!plain && !Array.isArray(bytes)) {
      const o = JSON.parse(bytes.toString('utf8')) as { custom_id: string; body: unknown };
      items = [Buffer.from(JSON.stringify({ custom_id: o.custom_id, body: o.body }))];
    }
    if (!first) out.push(COMMA);
    first = false;
    for (const item of items) {
      out.push(item);
      size += item.length;
    }
    size += 1;
    if (size >= PIECE_BYTES) {
      yield Buffer.concat(out);
      out = [];
      size = 0;
    }
  }
  if (out.length) yield Buffer.concat(out);
}

/** The requests of a checked file, read again from it (for createStreaming). */
export function requestStream(scan: Scan): () => AsyncIterable<Uint8Array> {
  return async function* () {
    const { readLines, isBlank } = await import('../../jsonl.js');
    async function* lines() {
      for await (const { bytes } of readLines(scan.file)) if (!isBlank(bytes)) yield bytes;
    }
    yield* arrayPieces(lines(), scan.plain);
  };
}

const SPOOL_PREFIX = 'router-batch-stdin-';
/** Twice a batch's limit (lines with method and url, spaces): more stdin cannot be one batch. */
const SPOOL_MAX_BYTES = 2 * BATCH_MAX_BYTES;

/** Stdin as it passes to the spool, refused past SPOOL_MAX_BYTES (`< /dev/zero` would fill the disk). */
const bounded = (source: AsyncIterable<Buffer>) =>
  limitBytes(source, SPOOL_MAX_BYTES, () => usage(`stdin holds more than ${SPOOL_MAX_BYTES / 1_000_000} MB, more than one batch takes: save it to a file and run "router batch run FILE", which splits it`));

/** Copies stdin to a private temp file (it is read twice: checked, then sent); removed on every exit path. */
export async function spoolStdin(stdin: InStream, signal?: AbortSignal): Promise<{ path: string; cleanup: () => void }> {
  await refuseFolderStdin(stdin);
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
    await pipeline(stdin, bounded, createWriteStream(path, { mode: 0o600 }), { signal });
  } catch (err) {
    cleanup();
    throw err;
  }
  return { path, cleanup };
}

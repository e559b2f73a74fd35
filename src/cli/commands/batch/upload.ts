import { processAlive } from '../../../internal/process.js';
import type { Scan } from './scan.js';
import type { InStream } from '../../io.js';

const PIECE_BYTES = 256 * 1024;

/** The requests as JSON array elements, comma-separated, read again from the file in 256 KiB pieces. */
export function requestStream(scan: Scan): () => AsyncIterable<string | Uint8Array> {
  return async function* () {
    const { readLines, isBlank } = await import('../../jsonl.js');
    let first = true;
    let out: Buffer[] = [];
    let size = 0;
    const COMMA = Buffer.from(',');
    for await (const { bytes } of readLines(scan.file)) {
      if (isBlank(bytes)) continue;
      let item = bytes;
      if (!scan.plain) {
        const o = JSON.parse(bytes.toString('utf8')) as { custom_id: string; body: unknown };
        item = Buffer.from(JSON.stringify({ custom_id: o.custom_id, body: o.body }));
      }
      if (!first) out.push(COMMA);
      first = false;
      out.push(item);
      size += item.length + 1;
      if (size >= PIECE_BYTES) {
        yield Buffer.concat(out);
        out = [];
        size = 0;
      }
    }
    if (out.length) yield Buffer.concat(out);
  };
}

const SPOOL_PREFIX = 'router-batch-stdin-';

/** Copies stdin to a private temp file (it is read twice: checked, then sent); removed on every exit path. */
export async function spoolStdin(stdin: InStream): Promise<{ path: string; cleanup: () => void }> {
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
    await pipeline(stdin, createWriteStream(path, { mode: 0o600 }));
  } catch (err) {
    cleanup();
    throw err;
  }
  return { path, cleanup };
}

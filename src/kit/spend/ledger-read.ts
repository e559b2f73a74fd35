/**
 * The usage ledger read back, record by record, through one reused buffer: `router usage` and the
 * budgets sum it as it is read, so memory stays flat however many lines it holds. Each buffer's
 * lines are handed over in one synchronous pass (no promise per line): a million lines make little
 * garbage.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ledgerPath, type UsageRecord } from './ledger.js';

/** Far more than any record takes: a longer line is no record (a damaged ledger) and is skipped unread. */
const MAX_RECORD_BYTES = 64 * 1024;
const BUFFER_BYTES = 256 * 1024;
/** The ledger as a user knows it, in a line about it. */
const LEDGER = 'usage ledger';

/**
 * Calls `each` with every well-formed record of the ledger (readable()), in order; other lines are skipped.
 * Ctrl-C (`signal`) stops the read. Resolves to how many lines were damaged (not blank, yet no record whole: torn, overwritten).
 */
export async function eachLedgerRecord(env: NodeJS.ProcessEnv, each: (r: UsageRecord, line: number) => void, signal?: AbortSignal, damagedAt?: (line: number) => void): Promise<number> {
  const path = ledgerPath(env);
  let handle;
  try {
    // Without waiting: a FIFO no one writes to would hold the read.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw Object.assign(err as Error, { syscall: 'read', keptAs: LEDGER });
  }
  try {
    // A device gives no end (/dev/zero, /dev/full: the budget's check spun for ever) or nothing (/dev/null: no spend, ever).
    const stat = await handle.stat();
    if (!stat.isFile() && !stat.isDirectory()) throw Object.assign(new Error(`ENOTFILE: not a regular file, read '${path}'`), { code: 'ENOTFILE', syscall: 'read', path });
    return await readRecords(handle, each, signal, damagedAt);
  } catch (err) {
    // A read's error names no file (a folder where the ledger goes: EISDIR): it is said with the ledger's path.
    const e = err as NodeJS.ErrnoException;
    if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) Object.assign(e, { path: e.path ?? path, keptAs: LEDGER });
    throw err;
  } finally {
    await handle.close();
  }
}

async function readRecords(handle: FileHandle, each: (r: UsageRecord, line: number) => void, signal: AbortSignal | undefined, damagedAt?: (line: number) => void): Promise<number> {
  const buf = Buffer.allocUnsafe(BUFFER_BYTES + MAX_RECORD_BYTES);
  let held = 0;
  let skipping = false;
  let damaged = 0;
  let line = 0;
  const bad = (n: number) => {
    if (n) damagedAt?.(line);
    return n;
  };
  for (;;) {
    signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buf, held, buf.length - held, null);
    const end = held + bytesRead;
    const filled = buf.subarray(0, end);
    let start = 0;
    for (let nl = filled.indexOf(10); nl !== -1; nl = filled.indexOf(10, start)) {
      line++;
      if (skipping) skipping = false;
      else damaged += bad(nl - start <= MAX_RECORD_BYTES ? parse(buf, start, nl, each, line) : 1);
      start = nl + 1;
    }
    if (bytesRead === 0) {
      line++;
      if (!skipping && start < end && end - start <= MAX_RECORD_BYTES) damaged += bad(parse(buf, start, end, each, line));
      return damaged;
    }
    held = end - start;
    // A line longer than any record: dropped as it is read, until its end.
    if (held > MAX_RECORD_BYTES) {
      // Its line is counted when its end is read.
      if (!skipping) {
        damaged++;
        damagedAt?.(line + 1);
      }
      skipping = true;
      held = 0;
    } else buf.copyWithin(0, start, end);
  }
}

/** A record's cost is a number a call could cost, or none: `"0.5"`, `1e999` or `-1` is no cost router wrote (a negative one is reconcile's, checked by budgets). */
const costReadable = (r: UsageRecord) => r.cost === undefined || (typeof r.cost === 'number' && Number.isFinite(r.cost));

/** A record as router writes one: a time that is a date and a profile's name (else its cost would be counted by no budget, unsaid), its cost readable. */
const readable = (r: UsageRecord) => !!r && typeof r === 'object' && typeof r.time === 'string' && !Number.isNaN(Date.parse(r.time)) && typeof r.profile === 'string' && costReadable(r);

/** Hands `each` the line's record; 1 when the line was damaged (a record torn, or none whole, or a cost no number), else 0. */
function parse(buf: Buffer, start: number, end: number, each: (r: UsageRecord, line: number) => void, line: number): number {
  if (end > start && buf[end - 1] === 0x0d) end--;
  if (end <= start) return 0;
  let r: UsageRecord;
  const text = buf.toString('utf8', start, end);
  try {
    r = JSON.parse(text) as UsageRecord;
  } catch {
    // A line torn by a full disk, with the next record appended to it: that record is kept.
    const next = text.lastIndexOf('{"time":');
    if (next <= 0) return 1;
    try {
      r = JSON.parse(text.slice(next)) as UsageRecord;
    } catch {
      return 1;
    }
    if (readable(r)) each(r, line);
    return 1;
  }
  if (readable(r)) each(r, line);
  else return 1;
  return 0;
}

/**
 * The creates of `router batch create` whose answer has not been heard yet: one record per create
 * (its API root, file content and options), written before it is sent and removed once its batch
 * id is out. A record left behind (the CLI killed, the answer lost) is what a rerun of the same
 * create finds: its batch is looked for, never sent again unknowingly (nor over a record found damaged). A create with --watch keeps its
 * record until the watch saw its batch end (a rerun of one killed mid-watch watches the same batch). Records older than the 30
 * days the service keeps a batch are dropped; identical creates at once take turns (lockCreate).
 */
import { createHash } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { stateHome } from '../config/state-dir.js';
import { keptFileWhy } from '../internal/named-input.js';
import { readLocalText } from '../internal/local-file.js';
import { holdLockAsync, type LockHolder } from '../internal/file-lock.js';
import { makeDir } from '../internal/make-dir.js';
import { sleep } from '../internal/sleep.js';
import { writeWhole } from '../internal/write-whole.js';
import { rootKey } from '../internal/api-root.js';
import { isRecord } from '../internal/shape.js';
import type { Watermark } from './find-created.js';

export interface PendingCreate {
  /** When it was sent (UTC, ISO 8601). */
  sent_at: string;
  /** The newest batch listed before it; 'unlisted': the service has no listing; 'unknown': the listing failed. */
  after: Watermark | 'unlisted' | 'unknown';
  input: string;
  /** The batch's shape (its API root as rootKey() spells it, endpoint, model, request count): how a later command tells its batch. */
  api_root?: string;
  endpoint?: string;
  model?: string;
  count?: number;
  /** Its batch, once the answer came (the id may not have been printed yet). */
  batch_id?: string;
  /** Made with --watch: its id said, the record kept until the watch sees it end (a rerun watches it, never sends again). */
  watching?: true;
}

/** One create: the API root, the file's content (its SHA-256) and what the batch is made with. */
export function createKey(apiRoot: string, sha256: string, head: object): string {
  return createHash('sha256').update(JSON.stringify([rootKey(apiRoot), sha256, head])).digest('hex').slice(0, 32);
}

const createsDir = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'creates');
/** Where one create's record is (a budget's hold of the create names it: src/kit/spend/sent-create.ts). */
export const createRecordPath = (env: NodeJS.ProcessEnv, key: string) => join(createsDir(env), `${key}.json`);
const recordPath = createRecordPath;

/**
 * How long a record is kept: the service keeps a batch's inputs and results 30 days (the deployed
 * service's notes), so a rerun after that could neither print nor find the batch an earlier create made.
 */
export const CREATE_RECORD_MAX_AGE_MS = 30 * 24 * 3_600_000;

class Busy extends Error {
  constructor(readonly holder: LockHolder) {
    super('busy');
  }
}

/**
 * Holds the lock of one create (`creates/KEY.lock`) until the function returned is called (or this
 * process ends): two identical creates at once take turns, as if run one after the other. While another
 * process holds it, `waiting` is told once who, and the wait goes on until it is free (or `signal` aborts).
 */
export async function lockCreate(env: NodeJS.ProcessEnv, key: string, waiting: (holder: LockHolder) => void, signal?: AbortSignal): Promise<() => void> {
  makeDir(createsDir(env));
  let told = false;
  for (;;) {
    try {
      return await holdLockAsync(join(createsDir(env), `${key}.lock`), (holder) => new Busy(holder), () => {});
    } catch (err) {
      if (!(err instanceof Busy)) throw err;
      if (!told) waiting(err.holder);
      told = true;
      await sleep(200, signal);
    }
  }
}

/**
 * The record of an earlier create under `key`: undefined where there is none; `damaged` (why) where one is there that
 * cannot be read or is no create record: it may stand for a batch that was made, so the create is not sent over it.
 */
export function pendingCreate(env: NodeJS.ProcessEnv, key: string): PendingCreate | { damaged: string } | undefined {
  let text: string;
  try {
    text = readLocalText(recordPath(env, key));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return { damaged: code ? keptFileWhy(code) : `cannot read it (${(err as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    /* damaged, as below */
  }
  if (isRecord(value) && typeof value.sent_at === 'string') return value as unknown as PendingCreate;
  return { damaged: 'is damaged (not a create record)' };
}

/** Durable before the create is sent: a create killed at any instant after is found by its rerun. */
export function recordCreate(env: NodeJS.ProcessEnv, key: string, record: PendingCreate): void {
  writeWhole(recordPath(env, key), `${JSON.stringify(record)}\n`, true);
}

/** Forgets a create (its id is out, or it is sent anew), and the records older than CREATE_RECORD_MAX_AGE_MS. */
export function clearCreate(env: NodeJS.ProcessEnv, key: string, now = Date.now()): void {
  rmSync(recordPath(env, key), { force: true });
  let names: string[];
  try {
    names = readdirSync(createsDir(env));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const path = join(createsDir(env), name);
    try {
      // A record that cannot be read is aged by its file (its create, rerun, is refused until it is moved away).
      const record = pendingCreate(env, name.slice(0, -'.json'.length));
      const sent = (record && 'sent_at' in record ? Date.parse(record.sent_at) : NaN) || statSync(path).mtimeMs;
      if (now - sent > CREATE_RECORD_MAX_AGE_MS) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile, or not ours to remove: left.
    }
  }
}

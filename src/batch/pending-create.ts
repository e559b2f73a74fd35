/**
 * The creates of `router batch create` whose answer has not been heard yet: one record per create
 * (its API root, file content and options), written before it is sent and removed once its batch
 * id is out. A record left behind (the CLI killed, the answer lost) is what a rerun of the same
 * create finds: its batch is looked for, never sent again unknowingly.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { stateHome } from '../config/state-dir.js';
import { readLocalText } from '../internal/local-file.js';
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
  /** Its batch, once the answer came (the id may not have been printed yet). */
  batch_id?: string;
}

/** One create: the API root, the file's content (its SHA-256) and what the batch is made with. */
export function createKey(apiRoot: string, sha256: string, head: object): string {
  return createHash('sha256').update(JSON.stringify([rootKey(apiRoot), sha256, head])).digest('hex').slice(0, 32);
}

const recordPath = (env: NodeJS.ProcessEnv, key: string) => join(stateHome(env), 'creates', `${key}.json`);

export function pendingCreate(env: NodeJS.ProcessEnv, key: string): PendingCreate | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readLocalText(recordPath(env, key)));
  } catch {
    return undefined;
  }
  return isRecord(value) && typeof value.sent_at === 'string' ? (value as unknown as PendingCreate) : undefined;
}

/** Durable before the create is sent: a create killed at any instant after is found by its rerun. */
export function recordCreate(env: NodeJS.ProcessEnv, key: string, record: PendingCreate): void {
  writeWhole(recordPath(env, key), `${JSON.stringify(record)}\n`, true);
}

export function clearCreate(env: NodeJS.ProcessEnv, key: string): void {
  rmSync(recordPath(env, key), { force: true });
}

/**
 * Where each API root keeps its batches, as found out once and remembered in the state folder
 * (batch-places.json: `{ [api_root]: { path, listing } }`), so that later runs ask the right place first.
 */
import { join } from 'node:path';
import type { BatchPlace } from '../client/index.js';
import { stateHome } from '../config/state-dir.js';
import { makeDir } from '../internal/make-dir.js';
import { readLocalText } from '../internal/local-file.js';
import { withFileLock } from '../internal/with-file-lock.js';
import { writeWhole } from '../internal/write-whole.js';
import { isRecord } from '../internal/shape.js';

const file = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'batch-places.json');

function readAll(env: NodeJS.ProcessEnv): Record<string, BatchPlace> {
  try {
    const all: unknown = JSON.parse(readLocalText(file(env)));
    return isRecord(all) ? (all as Record<string, BatchPlace>) : {};
  } catch {
    // Missing or unreadable: nothing is known, and it is found out again.
    return {};
  }
}

export function rememberedPlace(env: NodeJS.ProcessEnv, apiRoot: string): BatchPlace | undefined {
  const p = readAll(env)[apiRoot];
  return isRecord(p) && (p.path === undefined || typeof p.path === 'string') ? { path: p.path, listing: typeof p.listing === 'boolean' ? p.listing : undefined } : undefined;
}

/** Saves what was found out of `apiRoot`; a state folder that cannot be written only means it is found out again. */
export function rememberPlace(env: NodeJS.ProcessEnv, apiRoot: string, place: BatchPlace): void {
  try {
    makeDir(stateHome(env));
    withFileLock(file(env), () => {
      const all = readAll(env);
      all[apiRoot] = { ...all[apiRoot], ...place };
      writeWhole(file(env), `${JSON.stringify(all, null, 2)}\n`);
    });
  } catch {
    /* found out again next time */
  }
}

/**
 * Where each API root keeps its batches, as found out once and remembered in the state folder
 * (batch-places.json: `{ [api_root]: { path, listing } }`), so that later runs ask the right place first.
 */
import { join } from 'node:path';
import type { BatchPlace } from '../client/index.js';
import { stateHome } from '../config/state-dir.js';
import { makeDir } from '../internal/make-dir.js';
import { existsSync } from 'node:fs';
import { readKeptText, sayKeptProblem } from '../internal/kept-state.js';
import { withFileLock } from '../internal/with-file-lock.js';
import { writeWhole } from '../internal/write-whole.js';
import { isRecord } from '../internal/shape.js';

const file = (env: NodeJS.ProcessEnv) => join(stateHome(env), 'batch-places.json');

/** What is done of a file that cannot be used: found out again, and the file kept as it is for its owner. */
const FOUND_AGAIN = 'where batches live is found out again, and it is kept as it is (move it away to have it remembered again)';

/** The places known, or undefined when the file is there but cannot be used (said): then it is never written over. */
function readAll(env: NodeJS.ProcessEnv): Record<string, BatchPlace> | undefined {
  const text = readKeptText(file(env), FOUND_AGAIN);
  if (text === undefined) return existsSync(file(env)) ? undefined : {};
  try {
    const all: unknown = JSON.parse(text);
    if (isRecord(all)) return all as Record<string, BatchPlace>;
  } catch {
    /* damaged, as below */
  }
  sayKeptProblem(file(env), `is damaged (not a JSON object); ${FOUND_AGAIN}`);
  return undefined;
}

export function rememberedPlace(env: NodeJS.ProcessEnv, apiRoot: string): BatchPlace | undefined {
  const p = readAll(env)?.[apiRoot];
  return isRecord(p) && (p.path === undefined || typeof p.path === 'string') ? { path: p.path, listing: typeof p.listing === 'boolean' ? p.listing : undefined } : undefined;
}

/** Saves what was found out of `apiRoot`; a state folder that cannot be written only means it is found out again. */
export function rememberPlace(env: NodeJS.ProcessEnv, apiRoot: string, place: BatchPlace): void {
  try {
    makeDir(stateHome(env));
    withFileLock(file(env), () => {
      const all = readAll(env);
      if (!all) return;
      all[apiRoot] = { ...all[apiRoot], ...place };
      writeWhole(file(env), `${JSON.stringify(all, null, 2)}\n`);
    });
  } catch {
    /* found out again next time */
  }
}

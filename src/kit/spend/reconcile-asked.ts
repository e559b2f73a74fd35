/**
 * What `usage --reconcile` remembers between runs, beside the ledger (`reconcile-asked.json` in the state folder): for
 * each profile and API root, when each call still unsettled was last found unknown to the service, and the time of the
 * newest call the service knew. A call is asked again only once its answer can have changed: the next run walks on
 * past calls asked a moment ago instead of asking them first again. Lost or damaged, it is only asked about anew.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateHome } from '../../config/state-dir.js';
import { writeWhole } from '../../internal/write-whole.js';

export interface AskedAt {
  /** Time (ms since 1970) of the newest call the service knew. */
  newestKnown: number;
  /** Call id → when (ms since 1970) the service last said it did not know it. */
  unknown: Map<string, number>;
}

type Saved = Record<string, { newest_known?: number; unknown?: Record<string, number> }>;

function pathOf(env: NodeJS.ProcessEnv): string {
  return join(stateHome(env), 'reconcile-asked.json');
}

function readSaved(env: NodeJS.ProcessEnv): Saved {
  try {
    const saved = JSON.parse(readFileSync(pathOf(env), 'utf8')) as unknown;
    return saved && typeof saved === 'object' && !Array.isArray(saved) ? (saved as Saved) : {};
  } catch {
    return {};
  }
}

export function readAsked(env: NodeJS.ProcessEnv, key: string): AskedAt {
  const entry = readSaved(env)[key];
  const unknown = new Map<string, number>();
  for (const [id, at] of Object.entries(entry?.unknown ?? {})) if (typeof at === 'number' && Number.isFinite(at)) unknown.set(id, at);
  const newest = entry?.newest_known;
  return { newestKnown: typeof newest === 'number' && Number.isFinite(newest) ? newest : -Infinity, unknown };
}

/** Keeps `asked` for `key` (others' entries as they are); a state folder that cannot be written only costs asks again. */
export function saveAsked(env: NodeJS.ProcessEnv, key: string, asked: AskedAt): void {
  const saved = readSaved(env);
  saved[key] = { ...(Number.isFinite(asked.newestKnown) ? { newest_known: asked.newestKnown } : {}), unknown: Object.fromEntries(asked.unknown) };
  try {
    writeWhole(pathOf(env), `${JSON.stringify(saved)}\n`);
  } catch {
    // Nothing is lost: the calls are asked about again.
  }
}

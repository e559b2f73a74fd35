/**
 * The service's model list, kept briefly in the state folder (one file per API root), so that
 * price look-ups, hints and completions do not fetch it on every call.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RouterClient } from '../../client/index.js';
import type { Model } from '../../client/resources/models.js';
import { stateHome } from '../../config/state-dir.js';
import { writeWhole } from '../../internal/write-whole.js';

/** How long a fetched list is used before it is fetched again. */
export const CATALOG_TTL_MS = 5 * 60_000;

interface CachedList {
  api_root: string;
  fetched_at: number;
  models: Model[];
}

/** One file per API root, named after it (the file holds the root too, so that a shared name is no confusion). */
export function catalogPath(env: NodeJS.ProcessEnv, apiRoot: string): string {
  const name = apiRoot.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 120);
  return join(stateHome(env), 'models', `${name}.json`);
}

/** More than any model list takes (OpenRouter's, of some 400 models, is about 1 MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/** The cache file's text when it is a regular file of a sane size (a FIFO or /dev/zero in its place is no cache). */
function readCacheFile(path: string): string | undefined {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && stat.size <= MAX_CACHE_BYTES ? readFileSync(fd, 'utf8') : undefined;
  } finally {
    closeSync(fd);
  }
}

const isModel = (m: unknown): m is Model => !!m && typeof m === 'object' && !Array.isArray(m) && typeof (m as Model).id === 'string';

/** The cached list of this API root, if it is fresh (kept less than `maxAgeMs`) and whole (an unreadable or damaged cache is no cache). */
export function cachedModels(env: NodeJS.ProcessEnv, apiRoot: string, now = Date.now(), maxAgeMs = CATALOG_TTL_MS): Model[] | undefined {
  try {
    const text = readCacheFile(catalogPath(env, apiRoot));
    if (text === undefined) return undefined;
    const cached = JSON.parse(text) as CachedList;
    if (!cached || cached.api_root !== apiRoot || !Array.isArray(cached.models) || !cached.models.every(isModel)) return undefined;
    if (!(now - cached.fetched_at >= 0 && now - cached.fetched_at < maxAgeMs)) return undefined;
    return cached.models;
  } catch {
    return undefined;
  }
}

export interface CatalogOptions {
  env: NodeJS.ProcessEnv;
  apiRoot: string;
  /** Fetch even when a fresh copy is kept. */
  refresh?: boolean;
  signal?: AbortSignal;
}

/** The model list: the kept copy when fresh, else fetched and kept (a cache that cannot be written is only slower). */
export async function modelCatalog(client: RouterClient, o: CatalogOptions): Promise<Model[]> {
  const kept = o.refresh ? undefined : cachedModels(o.env, o.apiRoot);
  if (kept) return kept;
  const models = await client.models.list({ signal: o.signal });
  try {
    const record: CachedList = { api_root: o.apiRoot, fetched_at: Date.now(), models };
    writeWhole(catalogPath(o.env, o.apiRoot), JSON.stringify(record));
  } catch {
    /* a read-only state folder: the list is fetched each time */
  }
  return models;
}

interface Architecture {
  input_modalities?: unknown;
  output_modalities?: unknown;
  modality?: unknown;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** A model's input and output modalities: the lists, else read from `modality` ("text+image->text"). */
export function modalities(m: Model): { input: string[]; output: string[] } {
  const a = (m.architecture ?? {}) as Architecture;
  const input = strings(a.input_modalities);
  const output = strings(a.output_modalities);
  if ((input.length || output.length) || typeof a.modality !== 'string') return { input, output };
  const [i = '', o = ''] = a.modality.split('->');
  return { input: i.split('+').filter(Boolean), output: o.split('+').filter(Boolean) };
}

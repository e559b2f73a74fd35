/** A folder of cassettes as files: each request's match key, its takes' order, reading them, and the last take of each. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Cassette } from './cassette-format.js';
import { cassetteWrong, providerWrong, type FileProvider } from './cassette-shape.js';
import { pidNamespace, processStart } from '../../internal/process.js';

type Body = Record<string, unknown>;

/** JSON with every object's keys sorted: the same request, however its members were ordered. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().filter((k) => (v as Body)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((v as Body)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** What a request asks (its model, messages, tools, parameters), to whom: equal keys, the same answer. */
export const matchKey = (provider: string, body: Body, endpoint: Endpoint = 'chat') => createHash('sha256').update(`${provider}\n${endpoint === 'chat' ? '' : `${endpoint}\n`}${canonical(body)}`).digest('hex');

export type Endpoint = 'chat' | 'embeddings' | 'responses' | 'speech';
export type Take = { file: string; cassette: Cassette };
/** Takes of one request in the order they are replayed: by `take`, then by file name. */
export const inOrder = (a: Take, b: Take) => (a.cassette.take ?? 1) - (b.cassette.take ?? 1) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);

/** The members of two requests that differ (top level), for naming the nearest cassette. */
export function differences(a: Body, b: Body): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonical(a[k]) !== canonical(b[k])).sort();
}

/** A stream's events read to their end (check-drift reads what the gateway would relay). */
export async function* ssePayloadsOf(events: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const data of events) {
    yield data;
    if (data === '[DONE]') return;
  }
}

/** A cassette file that cannot be read as one (a person edited it wrong): the folder's mistake, said before anything starts. */
export class CassetteFileError extends Error {
  override readonly name = 'CassetteFileError';
}

/**
 * What an editor or a file system leaves beside a file, never a cassette (no gateway's name begins with a dot): Emacs's
 * lock of a file being edited (`.#name.json`, a link to nowhere) and macOS's `._name.json` on a shared volume.
 */
const litter = (file: string) => file.startsWith('.#') || file.startsWith('._');

/** Every cassette of a folder, by file name, oldest name first; each of a provider of `providers` (the providers file's) when given. */
export function readCassettes(dir: string, providers?: readonly FileProvider[]): { file: string; cassette: Cassette }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !litter(f))
    .sort()
    .map((file) => {
      let text: string;
      let cassette: Cassette;
      try {
        text = readFileSync(join(dir, file), 'utf8');
      } catch (err) {
        throw new CassetteFileError(`cassette ${file} cannot be read: ${(err as Error).message}`, { cause: err });
      }
      try {
        cassette = JSON.parse(text) as Cassette;
      } catch (err) {
        throw new CassetteFileError(`cassette ${file} is not JSON: ${(err as Error).message}`, { cause: err });
      }
      const wrong = cassetteWrong(cassette) ?? (providers && providerWrong(cassette, providers));
      if (wrong) throw new CassetteFileError(`cassette ${file}: ${wrong}`);
      return { file, cassette };
    });
}

/**
 * Every request's takes in a folder, by match key, in the order they are replayed: of the newest
 * recording run among them only (Cassette.run), so a folder a killed `--record` left with a new take
 * beside older ones replays the new recording, never a mix of the two.
 */
export function takesByRequest(dir: string, providers?: readonly FileProvider[]): { byKey: Map<string, Take[]>; stale: Map<string, Take[]> } {
  const byKey = new Map<string, Take[]>();
  const stale = new Map<string, Take[]>();
  for (const take of readCassettes(dir, providers)) {
    const key = matchKey(take.cassette.provider, take.cassette.request.body, take.cassette.endpoint);
    byKey.set(key, [...(byKey.get(key) ?? []), take]);
  }
  for (const [key, takes] of byKey) {
    const newest = takes.reduce<string | undefined>((run, t) => (t.cassette.run !== undefined && (run === undefined || t.cassette.run > run) ? t.cassette.run : run), undefined);
    byKey.set(key, takes.filter((t) => t.cassette.run === newest).sort(inOrder));
    const older = takes.filter((t) => t.cassette.run !== newest);
    if (older.length) stale.set(key, older);
  }
  return { byKey, stale };
}

/**
 * The last take of each request of a folder (what replay answers once the others were), by file name: what --check-drift asks
 * again; each of a provider of `providers` that serves its endpoint, as replay reads them (else CassetteFileError).
 */
export function lastTakes(dir: string, providers?: readonly FileProvider[]): Take[] {
  return [...takesByRequest(dir, providers).byKey.values()].map((takes) => takes.at(-1)!).sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** The take whose request differs least from `body` to `provider` (the first take of each request), and in what. */
export function nearestTake(requests: Iterable<Take[]>, provider: string, body: Body): { file: string; diff: string[] } | undefined {
  let nearest: { file: string; diff: string[] } | undefined;
  for (const [first] of requests) {
    if (!first) continue;
    const diff = [...(first.cassette.provider === provider ? [] : ['provider']), ...differences(first.cassette.request.body, body)];
    if (!nearest || diff.length < nearest.diff.length) nearest = { file: first.file, diff };
  }
  return nearest;
}

/** Names this process writes through now (temp files, partial cassettes): a second writer of one (another gateway in it) takes the next. */
const inUse = new Set<string>();
let writer: string | undefined;

/**
 * This process as the writer a name beside a cassette carries: its pid and, where they can be read, when
 * it started and its pid namespace (`<pid>@<start>~<pidns>`, processStart(), pidNamespace()), so that a
 * later process given the same pid is not taken for it (a killed gateway's partial cassette kept while an
 * unrelated process had its pid), nor a gateway in another container on this machine, which may have the
 * same pid and start, writing one folder (their names collided, and each took the other's pid for a process of its own).
 */
export function writerName(): string {
  if (writer === undefined) {
    const start = processStart(process.pid);
    const ns = start === undefined ? undefined : pidNamespace();
    writer = `${process.pid}${start === undefined ? '' : `@${start}`}${ns === undefined ? '' : `~${ns}`}`;
  }
  return writer;
}

/**
 * A name beside `path` only this writer writes through: `<path>.<pid>@<start><suffix>` (writerName();
 * `-<n>` before the suffix while another writer of this process holds that one). Two gateways
 * recording into one folder once wrote each cassette through the one `<file>.tmp`: a rename took the
 * other's half-written file into place, and the other's rename failed (ENOENT). `release` gives the
 * name back once written.
 */
export function ownName(path: string, suffix: string): { name: string; release: () => void } {
  let name = `${path}.${writerName()}${suffix}`;
  for (let n = 2; inUse.has(name); n++) name = `${path}.${writerName()}-${n}${suffix}`;
  inUse.add(name);
  return { name, release: () => void inUse.delete(name) };
}

/** A cassette written to its own temp file (ownName), then renamed: whole or absent. A write that fails (a full disk) is said on stderr. */
export async function writeCassetteFile(path: string, text: string): Promise<void> {
  const temp = ownName(path, '.tmp');
  try {
    await writeFile(temp.name, text);
    await rename(temp.name, path);
  } catch (err) {
    process.stderr.write(`record: cassette ${path} not written: ${(err as Error).message}\n`);
    await rm(temp.name, { force: true }).catch(() => undefined);
  } finally {
    temp.release();
  }
}

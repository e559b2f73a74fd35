/**
 * Where a fragment comes from, in llm's order: an http(s) URL (fetched without any key, within a time
 * and a size), a kept fragment's alias or hash, else a file. `loadFragment` keeps it in the store by its
 * hash; `readFragment` leaves that to the caller (chat keeps them once the answer came).
 */
import { isUtf8 } from 'node:buffer';
import { resolve } from 'node:path';
import { ConnectionError, RouterError, TimeoutError } from '../client/errors.js';
import { readLocalFile } from '../internal/local-file.js';
import { isPipe, readPipe, unreadableWhy } from '../internal/named-input.js';
import { childSignal } from '../internal/abort-fanout.js';
import { FragmentError } from './errors.js';
import { MAX_FRAGMENT_BYTES, unkeptFragment, type Fragment, type FragmentStore } from './fragments.js';
import { checkOptions, optionNames } from '../client/option-names.js';

/** The names of FragmentSourceOptions's members, checked against it both ways (a new option is a name here too). */
const SOURCE_OPTIONS = optionNames<FragmentSourceOptions>()({ timeoutMs: 1, maxRetries: 1, maxBytes: 1, signal: 1, env: 1 });

export interface FragmentSourceOptions {
  /** The whole fetch of a URL: redirects, retries and every piece of a server that trickles (default 30 s). */
  timeoutMs?: number | undefined;
  /** Retries of a URL that refused the connection or answered 429 or 503 (default 2); one that stalls is not asked again. */
  maxRetries?: number | undefined;
  /** The most bytes a fragment holds (default MAX_FRAGMENT_BYTES). */
  maxBytes?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Proxies are read from it as for the service (HTTPS_PROXY, NO_PROXY); default: `process.env`. */
  env?: NodeJS.ProcessEnv | undefined;
}

const MAX_REDIRECTS = 5;

/** A URL's whole fetch by default: a page not read in 30 s is not worth a prompt's wait. */
export const FRAGMENT_TIMEOUT_MS = 30_000;

export const isFragmentUrl = (ref: string) => /^https?:\/\//i.test(ref);

/** The text of bytes, or a `not_text` refusal (binary, UTF-16, another encoding); a byte-order mark dropped. */
export function fragmentText(bytes: Uint8Array, source: string): string {
  if (bytes.includes(0) || !isUtf8(bytes)) throw new FragmentError('not_text', source, 'not UTF-8 text (binary, or another encoding): attach a file that is no text with -a');
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset + bom, bytes.byteLength - bom).toString('utf8');
}

/** A fragment by URL, alias, hash or file path, kept in `store` (stdin's text: `store.put(text, '-')`). */
export async function loadFragment(ref: string, store: FragmentStore, opts: FragmentSourceOptions = {}): Promise<Fragment> {
  const f = await readFragment(ref, store, opts);
  return store.put(f.content, f.source);
}

/** The same, not kept yet when it was read from a URL or a file (`store.put(f.content, f.source)` keeps it). */
export async function readFragment(ref: string, store: FragmentStore, opts: FragmentSourceOptions = {}): Promise<Fragment> {
  checkOptions('readFragment()', opts, SOURCE_OPTIONS);
  if (isFragmentUrl(ref)) return unkeptFragment(await fetchFragment(ref, opts), ref);
  const kept = store.find(ref);
  if (kept) return kept;
  let bytes: Buffer;
  // A pipe named as a file (`<(cmd)`, /dev/stdin) is read once, as it comes, within the same bound.
  const piped = isPipe(ref);
  try {
    bytes = piped ? await readPipe(ref, opts.maxBytes ?? MAX_FRAGMENT_BYTES, () => tooLarge(ref, opts.maxBytes), opts.signal) : readLocalFile(ref, opts.maxBytes ?? MAX_FRAGMENT_BYTES);
  } catch (err) {
    if (err instanceof FragmentError || opts.signal?.aborted) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FragmentError('not_found', ref, 'no file, URL, alias or hash of that name (router fragments list shows those kept)');
    if (code === 'EFBIG') throw tooLarge(ref, opts.maxBytes);
    throw new FragmentError('unreadable', ref, typeof code === 'string' ? unreadableWhy(code) : (err as Error).message);
  }
  return unkeptFragment(fragmentText(bytes, ref), piped ? ref : resolve(ref));
}

const tooLarge = (source: string, max = MAX_FRAGMENT_BYTES) => new FragmentError('too_large', source, `larger than ${max.toLocaleString('en-US')} bytes, the most a fragment holds`);

/**
 * A URL's text: GET without the service's key (a client of its own), redirects followed (at most 5), within the
 * size and within `timeoutMs` as a whole (a server trickling a byte a second would otherwise take hours).
 */
export async function fetchFragment(url: string, opts: FragmentSourceOptions = {}): Promise<string> {
  checkOptions('fetchFragment()', opts, SOURCE_OPTIONS);
  const timeoutMs = opts.timeoutMs ?? FRAGMENT_TIMEOUT_MS;
  const whole = childSignal(opts.signal ?? new AbortController().signal, timeoutMs);
  try {
    return await fetchWithin(url, { ...opts, signal: whole.signal }, timeoutMs);
  } catch (err) {
    if (!whole.timedOut() && !(err instanceof TimeoutError) && !(err instanceof FragmentError && err.cause instanceof TimeoutError)) throw err;
    throw new FragmentError('fetch_failed', url, `timed out: not fetched within ${seconds(timeoutMs)}`, new TimeoutError(`not fetched within ${seconds(timeoutMs)}`, { cause: err }));
  } finally {
    whole.done();
  }
}

async function fetchWithin(url: string, opts: FragmentSourceOptions & { signal: AbortSignal }, timeoutMs: number): Promise<string> {
  const max = opts.maxBytes ?? MAX_FRAGMENT_BYTES;
  // An HTTP client of its own, loaded by the first fetch: a program that imports the kit and fetches nothing does not load it.
  const [{ HttpCore }, { bodyError }, { proxyFromEnv }] = await Promise.all([import('../client/core.js'), import('../client/connection-errors.js'), import('../config/proxy.js')]);
  let at = url;
  for (let hop = 0; ; hop++) {
    const target = new URL(at);
    const core = new HttpCore({ keyless: true, apiRoot: target.origin, timeoutMs, maxRetries: opts.maxRetries ?? 2, proxy: proxyFromEnv(opts.env ?? process.env, target.origin) });
    try {
      // A server that stalls would stall again: only what it cannot have answered (refused, 429, 503) is asked again.
      const res = await core.send({ method: 'GET', path: '', url: at, anyStatus: true, signal: opts.signal, accept: '*/*', retry: 'unaccepted' }).catch((err: unknown) => {
        throw new FragmentError('fetch_failed', url, err instanceof ConnectionError || err instanceof RouterError ? err.message : String(err), err);
      });
      const location = [res.headers.location].flat()[0];
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body.dump().catch(() => {});
        if (hop >= MAX_REDIRECTS) throw new FragmentError('fetch_failed', url, `more than ${MAX_REDIRECTS} redirects`);
        at = new URL(location, at).toString();
        if (!isFragmentUrl(at)) throw new FragmentError('fetch_failed', url, `redirected to ${at}, which is no http(s) URL`);
        continue;
      }
      if (res.status < 200 || res.status >= 300) {
        await res.body.dump().catch(() => {});
        throw new FragmentError('fetch_failed', url, `HTTP ${res.status}${at === url ? '' : ` from ${at}`}`);
      }
      const declared = Number([res.headers['content-length']].flat()[0]);
      if (declared > max) {
        res.body.destroy();
        throw tooLarge(url, max);
      }
      const pieces: Buffer[] = [];
      let size = 0;
      try {
        for await (const piece of res.body) {
          size += piece.length;
          if (size > max) {
            res.body.destroy();
            throw tooLarge(url, max);
          }
          pieces.push(piece);
        }
      } catch (err) {
        if (err instanceof FragmentError) throw err;
        // undici's own words ("Body Timeout Error", "other side closed") as the service's answers word them.
        const said = bodyError(err, at);
        throw new FragmentError('fetch_failed', url, said.message, said);
      }
      return fragmentText(Buffer.concat(pieces, size), url);
    } finally {
      await core.close();
    }
  }
}

const seconds = (ms: number) => (ms >= 1000 ? `${Number((ms / 1000).toFixed(3))}s` : `${ms}ms`);

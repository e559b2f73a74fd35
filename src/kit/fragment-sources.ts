/**
 * Where a fragment comes from, in llm's order: an http(s) URL (fetched without any key, within a time
 * and a size), a kept fragment's alias or hash, else a file. Each is kept in the store by its hash.
 */
import { isUtf8 } from 'node:buffer';
import { resolve } from 'node:path';
import { HttpCore } from '../client/core.js';
import { ConnectionError, RouterError } from '../client/errors.js';
import { bodyError } from '../client/connection-errors.js';
import { proxyFromEnv } from '../config/proxy.js';
import { readLocalFile } from '../internal/local-file.js';
import { FragmentError } from './errors.js';
import { MAX_FRAGMENT_BYTES, type Fragment, type FragmentStore } from './fragments.js';

export interface FragmentSourceOptions {
  /** Each wait of a URL's fetch: to connect, for the answer, for each next piece (default 120 s). */
  timeoutMs?: number;
  /** Retries of a URL's transient failures (default 2). */
  maxRetries?: number;
  /** The most bytes a fragment holds (default MAX_FRAGMENT_BYTES). */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Proxies are read from it as for the service (HTTPS_PROXY, NO_PROXY); default: `process.env`. */
  env?: NodeJS.ProcessEnv;
}

const MAX_REDIRECTS = 5;

export const isFragmentUrl = (ref: string) => /^https?:\/\//i.test(ref);

/** The text of bytes, or a `not_text` refusal (binary, UTF-16, another encoding); a byte-order mark dropped. */
export function fragmentText(bytes: Uint8Array, source: string): string {
  if (bytes.includes(0) || !isUtf8(bytes)) throw new FragmentError('not_text', source, 'not UTF-8 text (binary, or another encoding): attach a file that is no text with -a');
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset + bom, bytes.byteLength - bom).toString('utf8');
}

/** A fragment by URL, alias, hash or file path, kept in `store` (stdin's text: `store.put(text, '-')`). */
export async function loadFragment(ref: string, store: FragmentStore, opts: FragmentSourceOptions = {}): Promise<Fragment> {
  if (isFragmentUrl(ref)) return store.put(await fetchFragment(ref, opts), ref);
  const kept = store.find(ref);
  if (kept) return kept;
  let bytes: Buffer;
  try {
    bytes = readLocalFile(ref, opts.maxBytes ?? MAX_FRAGMENT_BYTES);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FragmentError('not_found', ref, 'no file, URL, alias or hash of that name (router fragments list shows those kept)');
    if (code === 'EFBIG') throw tooLarge(ref, opts.maxBytes);
    throw new FragmentError('unreadable', ref, (err as Error).message);
  }
  return store.put(fragmentText(bytes, ref), resolve(ref));
}

const tooLarge = (source: string, max = MAX_FRAGMENT_BYTES) => new FragmentError('too_large', source, `larger than ${max.toLocaleString('en-US')} bytes, the most a fragment holds`);

/** A URL's text: GET without the service's key (a client of its own), redirects followed (at most 5), within the size. */
export async function fetchFragment(url: string, opts: FragmentSourceOptions = {}): Promise<string> {
  const max = opts.maxBytes ?? MAX_FRAGMENT_BYTES;
  let at = url;
  for (let hop = 0; ; hop++) {
    const target = new URL(at);
    const core = new HttpCore({ keyless: true, apiRoot: target.origin, timeoutMs: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2, proxy: proxyFromEnv(opts.env ?? process.env, target.origin) });
    try {
      const res = await core.send({ method: 'GET', path: '', url: at, anyStatus: true, signal: opts.signal, accept: '*/*' }).catch((err: unknown) => {
        throw new FragmentError('fetch_failed', url, err instanceof ConnectionError || err instanceof RouterError ? err.message : String(err));
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
        throw new FragmentError('fetch_failed', url, bodyError(err, at).message);
      }
      return fragmentText(Buffer.concat(pieces, size), url);
    } finally {
      await core.close();
    }
  }
}

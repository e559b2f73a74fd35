/** Checks a requests file before anything is sent: every line, with its number, in one pass. */
import { isAscii } from 'node:buffer';
import { accessSync, constants, statSync } from 'node:fs';
import type { BatchEndpoint } from '../client/types.js';
import { BATCH_ENDPOINTS, BATCH_MAX_BYTES, BATCH_MAX_REQUESTS, MAX_JSON_DEPTH, isModelId, MODEL_ID_MAX, MODEL_ID_SYNTAX } from '../client/facts.js';
import { nestedDeeperThan } from '../internal/json-depth.js';
import { notTextReason } from '../internal/not-text.js';
import { namedFileLine, unreadableWhy } from '../internal/named-input.js';
import { isBlank as isBlankName } from '../internal/blank.js';
import { counted, grouped } from '../internal/counted.js';
import { BatchError, invalid, LIBRARY_WORDS, term, wordLines } from './errors.js';
import { nounFor } from '../internal/counted.js';

export interface Scan {
  file: string;
  endpoint: BatchEndpoint;
  model: string | undefined;
  count: number;
  /** Bytes of the request body the CLI will send: the wrapper and every element with its comma. */
  bytes: number;
  /** Every line is exactly {custom_id, body}: its text can go out unchanged. */
  plain: boolean;
}

export interface ScanLimits {
  maxBytes?: number | undefined;
  maxRequests?: number | undefined;
  /** The longest line taken (default maxBytes): a longer one is a problem, its bytes never held. */
  maxLineBytes?: number | undefined;
}

export interface ScanHooks {
  /** Sees every byte of the file once, in order, as it is read (e.g. to hash it). */
  onRead?: ((bytes: Buffer) => void) | undefined;
  /** Each request line: its number, its byte offsets [start, next), and its size as an array element. */
  onLine?: ((number: number, start: number, next: number, bytes: number) => void) | undefined;
}

const ENDPOINTS: readonly string[] = BATCH_ENDPOINTS;

/**
 * A requests file must exist and be a file; said in words before anything is read or sent. A pipe
 * (`<(cmd)`) is refused, as it is read once and a requests file is read twice: checked, then sent
 * (`router batch create` spools one first).
 */
export function checkInputFile(file: string, pipedHint = 'a pipe is read once, and a requests file twice (checked, then sent): save the requests to a file and give its path'): void {
  if (isBlankName(file)) throw invalid('the requests file name is empty');
  const unusable = (what: string) => invalid(namedFileLine('requests file', file, what));
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    throw unusable(unreadableWhy((err as NodeJS.ErrnoException).code ?? 'ENOENT'));
  }
  if (st.isDirectory()) throw unusable(unreadableWhy('EISDIR'));
  if (!st.isFile()) throw unusable(`is not a file${st.isFIFO() || st.isCharacterDevice() ? `: ${pipedHint}` : ''}`);
  try {
    accessSync(file, constants.R_OK);
  } catch (err) {
    throw unusable(unreadableWhy((err as NodeJS.ErrnoException).code ?? 'EACCES'));
  }
}

/** Bytes of the JSON wrapper around the requests array, for the size check. */
export function wrapperBytes(head: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify({ ...head, requests: [] }));
}

class Problems {
  readonly shown: string[] = [];
  count = 0;
  constructor(private readonly label: string) {}
  add(line: number | undefined, text: string): void {
    this.count++;
    if (this.shown.length < 20) this.shown.push(line === undefined ? `${this.label}: ${text}` : `${this.label}:${line}: ${text}`);
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more = this.count - this.shown.length;
    const lines = more > 0 ? [...this.shown, `… and ${more} more ${nounFor(more, 'problem')}`] : this.shown;
    const worded = wordLines(lines, LIBRARY_WORDS);
    throw new BatchError(worded.join('\n'), 'invalid', worded, { about: 'bad_lines', templates: lines });
  }
}

function normalUrl(url: unknown): string {
  if (typeof url !== 'string') return '';
  return url.startsWith('/v1/') ? url : `/v1${url.startsWith('/') ? '' : '/'}${url}`;
}

/** Reads the whole file once and reports every problem with its line number; nothing is sent. */
export async function scanRequests(file: string, label: string, opts: { endpoint?: string | undefined; model?: string | undefined } & ScanLimits & ScanHooks): Promise<Scan> {
  const { scanLines, isBlank } = await import('../internal/jsonl.js');
  const maxBytes = opts.maxBytes ?? BATCH_MAX_BYTES;
  const maxRequests = opts.maxRequests ?? BATCH_MAX_REQUESTS;
  const problems = new Problems(label);
  const state: ScanState = { seen: new Map(), models: new Map(), endpointFromUrl: undefined, plain: true };
  let count = 0;
  let bytes = 0;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  const maxLine = opts.maxLineBytes ?? maxBytes;
  for await (const { number, bytes: raw, next, overLength } of scanLines(file, { onRead: opts.onRead, maxLineBytes: maxLine })) {
    const at = start;
    start = next;
    const length = overLength ?? raw.length;
    // A NUL byte: binary data or UTF-16 (PowerShell's `>`), not a file of lines to list one by one.
    const nul = overLength === undefined ? raw.indexOf(0) : -1;
    if (nul !== -1) throw invalid(`${label} is not UTF-8 text (${at === 0 ? notTextReason(raw) : `it holds a NUL byte at offset ${at + nul}: binary data, not text`})`);
    if (overLength === undefined && isBlank(raw)) continue;
    bytes += length + 1;
    count++;
    opts.onLine?.(number, at, next, length + 1);
    const report = (text: string) => problems.add(number, text);
    if (length > maxLine) {
      report(`${length} bytes long: one request is larger than a whole batch may be (${maxLine} bytes)`);
      continue;
    }
    let text: string;
    try {
      // ASCII reads the same in Latin-1, without the UTF-8 decoder's work.
      text = isAscii(raw) ? raw.toString('latin1') : utf8.decode(raw);
    } catch {
      report('not valid UTF-8');
      continue;
    }
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch (err) {
      report(`not JSON (${(err as Error).message.replace(/\s+/g, ' ')})`);
      continue;
    }
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      report('not a JSON object');
      continue;
    }
    checkItem(item as Record<string, unknown>, number, state, opts, report);
    // Nesting deeper than the bound takes more than two brackets per level.
    const body = (item as { body?: unknown }).body;
    if (length > 2 * MAX_JSON_DEPTH && body && typeof body === 'object' && nestedDeeperThan(body, MAX_JSON_DEPTH)) report(`body is nested deeper than ${MAX_JSON_DEPTH} levels (the service refuses it)`);
  }
  if (count === 0) throw invalid(`${label}: no requests (${start > 0 ? 'only blank lines' : 'it is empty'})`);
  const endpoint = (opts.endpoint ?? state.endpointFromUrl?.value ?? '/v1/chat/completions') as BatchEndpoint;
  const model = opts.model ?? [...state.models.keys()][0];
  // The body really sent: the wrapper, each element, a comma between elements (a model name is at most as long as the longest given).
  const total = bytes - 1 + wrapperBytes({ endpoint, model: model ?? 'x/'.padEnd(64, 'x'), completion_window: '24h' });
  // Only `batch create` has these bounds; `batch run` splits a file under them.
  const split = term('split');
  if (count > maxRequests) problems.add(undefined, `${counted(count, 'request')}: a batch holds at most ${grouped(maxRequests)} (${split})`);
  if (total > maxBytes) problems.add(undefined, `the request body would be ${total} bytes (${(total / 1e6).toFixed(1)} MB), over the limit of ${maxBytes} bytes (${(maxBytes / 1e6).toFixed(0)} MB) (${split})`);
  if (!opts.model && state.models.size > 1) {
    const [[a, la], [b, lb]] = [...state.models.entries()];
    // --model is no way out: a body naming another model is refused beside it (and by the service).
    problems.add(undefined, `the bodies name different models ("${a}" on line ${la}, "${b}" on line ${lb}), and a batch has one: make a file of each model's lines`);
  }
  problems.throwIfAny();
  return { file, endpoint, model, count, bytes: total, plain: state.plain };
}

interface ScanState {
  seen: Map<string, number>;
  models: Map<string, number>;
  endpointFromUrl: { value: string; line: number } | undefined;
  plain: boolean;
}

/** The checks of one request line (a JSON object): id, body, model, method and url. */
function checkItem(o: Record<string, unknown>, number: number, state: ScanState, opts: { endpoint?: string; model?: string }, report: (text: string) => void): void {
  if (Object.keys(o).some((k) => k !== 'custom_id' && k !== 'body')) state.plain = false;
  if (o.custom_id === undefined || o.custom_id === null) report('missing custom_id');
  else if (typeof o.custom_id !== 'string') report('custom_id must be a string');
  else if (o.custom_id === '') report('empty custom_id');
  else if (state.seen.has(o.custom_id)) report(`duplicate custom_id "${o.custom_id}" (first on line ${state.seen.get(o.custom_id)})`);
  else state.seen.set(o.custom_id, number);
  if (o.body === undefined) report('missing body');
  else if (!o.body || typeof o.body !== 'object' || Array.isArray(o.body)) report('body must be a JSON object');
  else {
    const m = (o.body as Record<string, unknown>).model;
    if (typeof m === 'string' && m.length > MODEL_ID_MAX) report(`body.model is ${m.length} characters long: a model id has at most ${MODEL_ID_MAX}`);
    else if (m !== undefined && (typeof m !== 'string' || !isModelId(m))) report(`body.model must look like ${MODEL_ID_SYNTAX}, got ${JSON.stringify(m)}`);
    else if (typeof m === 'string' && !state.models.has(m)) state.models.set(m, number);
    if (opts.model && typeof m === 'string' && isModelId(m) && m !== opts.model) report(`body.model "${m}" differs from ${term('model')} "${opts.model}"`);
  }
  if (o.method !== undefined && o.method !== 'POST') report(`method must be POST, got ${JSON.stringify(o.method)}`);
  if (o.url !== undefined) {
    const url = normalUrl(o.url);
    if (!ENDPOINTS.includes(url)) report(`url ${JSON.stringify(o.url)} is not a batch endpoint (${ENDPOINTS.join(', ')})`);
    else if (opts.endpoint && url !== opts.endpoint) report(`url "${url}" differs from ${term('endpoint')} "${opts.endpoint}"`);
    else if (state.endpointFromUrl && state.endpointFromUrl.value !== url) report(`url "${url}" differs from "${state.endpointFromUrl.value}" on line ${state.endpointFromUrl.line}`);
    else state.endpointFromUrl ??= { value: url, line: number };
  }
}

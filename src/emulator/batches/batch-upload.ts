import { ArraySplitter, JSONSplitError } from '../../internal/json-split.js';
import { HttpError, LOG_BODY_BYTES, MAX_JSON_DEPTH, type Ctx } from '../http/http.js';
import { nestedDeeperThan } from '../../internal/json-depth.js';
import { MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, bad, type Body } from './batch-rules.js';
import type { BatchUpload } from '../state/store-api.js';

export interface Upload {
  /** The body's fields other than `requests`. */
  rest: Body;
  elements: number;
  size: number;
}


/** Checks one element of `requests` and returns its line for the requests file. */
function requestLine(bytes: Buffer, i: number, seen: Set<string>): string {
  if (i >= MAX_BATCH_REQUESTS) bad(`a batch holds at most ${MAX_BATCH_REQUESTS} requests`);
  let item: unknown;
  try {
    item = JSON.parse(bytes.toString('utf8'));
  } catch {
    bad(`requests[${i}] is not valid JSON`);
  }
  if (!item || typeof item !== 'object' || Array.isArray(item)) bad(`requests[${i}] must be an object`);
  const { custom_id, body } = item as Body;
  if (typeof custom_id !== 'string' || custom_id === '') bad(`requests[${i}] has no custom_id`);
  if (seen.has(custom_id)) throw new HttpError(422, `duplicate custom_id "${custom_id}" at requests[${i}]`, 'unprocessable');
  seen.add(custom_id);
  if (!body || typeof body !== 'object' || Array.isArray(body)) bad(`requests[${i}] (${custom_id}) has no body object`);
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) bad(`requests[${i}] (${custom_id}): body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return JSON.stringify({ custom_id, body });
}

/**
 * Reads a batch body as it streams in (the real service stream-parses it, so `endpoint` and `model`
 * must come before `requests`), checking each request and appending it as a line to `upload`.
 */
export async function receiveRequests(ctx: Ctx, upload: BatchUpload): Promise<Upload> {
  const seen = new Set<string>();
  let lines: string[] = [];
  const splitter = new ArraySplitter(
    'requests',
    (bytes, i) => lines.push(requestLine(bytes, i, seen)),
    (before) => {
      if (!before.includes('endpoint') || !before.includes('model')) bad('"endpoint" and "model" must come before "requests" in the JSON body');
    },
  );
  let size = 0;
  const logged: Buffer[] = [];
  let rest: Body;
  try {
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (ctx.log && size <= LOG_BODY_BYTES) logged.push(chunk as Buffer);
      if (size > MAX_BATCH_BYTES) throw new HttpError(413, 'Batch input larger than 200 MB', 'payload_too_large');
      splitter.push(chunk as Buffer);
      if (lines.length) {
        // All of it, or the upload fails (a short write of a full disk is no error of its own).
        const text = Buffer.from(`${lines.join('\n')}\n`);
        upload.append(text);
        lines = [];
      }
      // What is not on disk yet counts among the bodies in flight (one large request can be most of 200 MB).
      // One request larger than all the budget could ever hold is refused for good: 413 (503 is not
      // in the create's status set, and its Retry-After invites a retry that cannot succeed).
      if (!ctx.body.couldHold(splitter.held)) throw new HttpError(413, `requests[${splitter.elements}] alone (${splitter.held} bytes so far) is larger than one request of a batch may be`, 'payload_too_large');
      ctx.body.hold(splitter.held);
    }
    rest = splitter.end();
  } catch (err) {
    if (err instanceof JSONSplitError) bad(`request body is not a valid batch: ${err.message}`);
    throw Object.assign(err as Error, { size });
  }
  // The openai package's batches.create sends an uploaded file's id, which this API does not take.
  const noFiles = splitter.keys.includes('input_file_id') ? ': this API takes the requests inline, not an uploaded file (input_file_id)' : '';
  if (!splitter.keys.includes('requests') || !Array.isArray(rest.requests)) bad(`requests must be a non-empty array${noFiles}`);
  if (splitter.elements === 0) bad(`requests must be a non-empty array${noFiles}`);
  ctx.log?.keepBody(size <= LOG_BODY_BYTES ? Buffer.concat(logged) : undefined, size);
  return { rest, elements: splitter.elements, size };
}

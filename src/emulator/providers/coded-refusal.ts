/** An upstream's error answer in a content-coding (gzip, deflate, br), decoded so its words reach the caller. */
import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/** A coded error body larger than this is not decoded (on the event loop): the answer stays coded, passed over. */
export const CODED_ERROR_BYTES = 64 * 1024;
/** The most a coded error body is decoded to. */
const MAX_DECODED = 1024 * 1024;

/** What node can undo of one coding; as much as it can of a body cut short (a refusal's first bytes); undefined when it cannot. */
function decode(coding: string, body: Buffer): Buffer | undefined {
  const opts = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_DECODED };
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(body, opts);
    if (coding === 'br') return brotliDecompressSync(body, { finishFlush: constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_DECODED });
    if (coding === 'deflate') {
      try {
        return inflateSync(body, opts);
      } catch {
        // Some servers send deflate without its zlib wrapper.
        return inflateRawSync(body, opts);
      }
    }
  } catch {
    // not what it says it is: left coded
  }
  return undefined;
}

/**
 * A whole answer's text. An error answer (4xx, 5xx) of at most CODED_ERROR_BYTES in gzip, deflate or
 * br is decoded (and its `content-encoding` dropped from `headers`), so a refusal is relayed to the
 * caller and a passed-over status has its words; any other coded answer is left as it came (the
 * gateway asked for none and passes it over in words).
 */
export function answerText(status: number, headers: Record<string, string>, body: Buffer): string {
  const coding = headers['content-encoding']?.trim().toLowerCase();
  if (!coding || coding === 'identity' || status < 400 || body.length > CODED_ERROR_BYTES) return body.toString('utf8');
  const decoded = decode(coding, body);
  if (decoded === undefined) return body.toString('utf8');
  delete headers['content-encoding'];
  return decoded.toString('utf8');
}

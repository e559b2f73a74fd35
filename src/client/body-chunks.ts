import { bodyError } from './connection-errors.js';
import type { RawResponse } from './core.js';

/**
 * Iterates a response body, turning socket failures mid-body into ConnectionError. Once `signal` (the
 * caller's) is aborted, no chunk is handed out, not even one read before.
 */
export async function* bodyChunks(res: RawResponse, url = 'http://server/', signal?: AbortSignal): AsyncGenerator<Uint8Array, void, undefined> {
  const chunks = res.body;
  let ended = false;
  try {
    for (let step = await chunks.next(); !step.done; step = await chunks.next()) {
      if (signal?.aborted) throw signal.reason;
      yield step.value;
    }
    ended = true;
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw bodyError(err, url);
  } finally {
    // Left early or failed: the body is released.
    if (!ended) await chunks.return();
  }
}

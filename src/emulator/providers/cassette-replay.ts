/** Answering from a cassette: a recorded answer when it came, a recorded failure again, a caller gone. */
import { text, until, type Cassette } from './cassette-format.js';
import { ProviderFailure, passesOver, type StopSignal, type UpstreamReply } from './types.js';
import { statusFailure } from './bounded.js';
import { join } from 'node:path';
import { nearestTake, type Take } from './cassette-folder.js';
import { visible } from '../../internal/visible.js';

/**
 * A caller who has gone is answered by no cassette: it fails as a live upstream asked so does (the
 * gateway then asks no other provider, charges nothing), not replayed at once to nobody.
 */
export function gone(provider: string, signal: StopSignal): void {
  if (signal.aborted) throw new ProviderFailure('broken', `${provider}: the caller went away`);
}

/**
 * Whether a take is a failure: one recorded as one, or an answer whose status the gateway passes over
 * now but relayed when it was recorded (a provider's 402, before stop 59: its own account at the
 * provider, never the caller's).
 */
export const failed = (c: Cassette): boolean => !!c.response.failure || (!c.response.chunks && !c.response.audio && passesOver(c.response.status));

/**
 * What to check when a replayed take is a provider's 401 or 403: the key refused was the recording
 * run's (a replay sends none), so the file, the provider's `api_key_env` and the way to record it again.
 */
export function recordedRefusalHint(provider: string, keyEnv: string | undefined, file: string, byRecordMissing = false): string {
  const key = keyEnv ? `${keyEnv} (its api_key_env)` : 'api_key_env (the file names none for it)';
  // A refusal --record-missing kept is asked again by its next run, not replayed (cassette.ts).
  const again = byRecordMissing ? 'run router serve --record-missing: it asks again and keeps the answer in its place' : 'delete that file and run router serve --record-missing to record the request again';
  return `replayed from ${file}, recorded when ${provider} refused the key it was sent: once ${key} holds a key it takes, ${again}`;
}

/** A recorded failure, again, when it came (times `timing`): the gateway passes this provider over as it did (or as it would now); `keyHint` said after a 401's or 403's words. */
export async function failAgain(c: Cassette, timing: number, signal: StopSignal, stopping: StopSignal, keyHint = ''): Promise<never> {
  const started = performance.now();
  const ms = c.response.after_ms;
  await until(started + (typeof ms === 'number' && ms > 0 ? ms * timing : 0), signal.caller ?? signal, stopping);
  gone(c.provider, signal);
  if (stopping.aborted) throw new ProviderFailure('stopping', `${c.provider}: the gateway is stopping`);
  const { status, failure, body, headers } = c.response;
  if (!failure) throw statusFailure(c.provider, status, text(body ?? ''), headers?.['retry-after'], keyHint);
  const hint = keyHint && (status === 401 || status === 403) ? keyHint : undefined;
  const again = new ProviderFailure(failure.reason, failure.message, status || undefined, failure.retry_after, hint);
  again.errorType = failure.error_type;
  throw again;
}

/**
 * A recorded answer, as the upstream gave it and when: each chunk at its recorded time since the
 * request, times `timing`. A caller who goes while a whole answer waits ends the wait: a whole answer's
 * signal (its `caller`) never aborts, and the answer, there at once, is charged as a live one read to its end;
 * the gateway's stop fails the replay as it fails a live request (a stream ends with the error chunk).
 */
export async function replay(c: Cassette, timing: number, signal: StopSignal, stopping: StopSignal): Promise<UpstreamReply> {
  const started = performance.now();
  const due = (ms: unknown) => started + (typeof ms === 'number' && ms > 0 ? ms * timing : 0);
  const stopped = () => {
    if (stopping.aborted) throw new ProviderFailure('stopping', `${c.provider}: the gateway is stopping`);
  };
  const { status, headers, body, chunks, broken, broken_after_ms, broken_reason } = c.response;
  if (!chunks) {
    await until(due(c.response.after_ms), signal.caller ?? signal, stopping);
    gone(c.provider, signal);
    stopped();
    return { kind: 'json', status, headers, text: text(body) };
  }
  async function* events(): AsyncGenerator<string> {
    for (const chunk of chunks!) {
      await until(due(chunk.after_ms), signal, stopping);
      stopped();
      yield text(chunk.data);
    }
    if (broken === undefined) return;
    // A stall the upstream was let go after (first_event_timeout_ms, idle_timeout_ms) breaks as late as it did.
    await until(due(broken_after_ms), signal, stopping);
    stopped();
    throw new ProviderFailure(broken_reason ?? 'broken', broken);
  }
  return { kind: 'stream', status, headers, events: events() };
}

/**
 * A request no cassette in `dir` holds: a failure of this provider, passed over like a dead one (a
 * provider passed over while recording left no cassette); when every provider misses, the caller's
 * 404. Said on the serve terminal too (stderr, as a cassette not written is), for whoever runs the gateway.
 */
export function missed(dir: string, takes: Iterable<Take[]>, provider: string, body: Record<string, unknown>): ProviderFailure {
  const nearest = nearestTake(takes, provider, body);
  const near = nearest ? `; the nearest is ${join(dir, nearest.file)}, which differs in ${nearest.diff.join(', ')}` : `; ${dir} holds none`;
  // The way out, for whoever reads it: the gateway's operator, or a caller who runs it too (a CI job).
  const why = `replay: no cassette answers this request to ${provider} (model ${String(body.model)})${near}; router serve --record-missing would ask ${provider} for it and keep its answer`;
  // Its field names and model come from the request: escaped for the terminal, and cut at a line's worth.
  process.stderr.write(`${visible(why.length > 1000 ? `${why.slice(0, 1000)}…` : why)}\n`);
  return new ProviderFailure('missing', why, 404);
}

/** A cassette file's members checked as a person may have edited them: what is wrong, named by its path; undefined when it is one. */
const REASONS = ['refused', 'timeout', 'status', 'broken', 'unavailable', 'missing', 'stopping'];
const ENDPOINTS = ['embeddings', 'responses', 'speech'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isMs = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** A list of `{after_ms, …}` pieces, each with `member` of the type `ok` checks. */
function piecesWrong(at: string, list: unknown, member: string, ok: (v: unknown) => boolean, what: string): string | undefined {
  if (!Array.isArray(list)) return `${at} must be a list`;
  const i = list.findIndex((p) => !isObj(p) || !isMs(p.after_ms) || !ok(p[member]));
  return i < 0 ? undefined : `${at}[${i}] must be {"after_ms": milliseconds, "${member}": ${what}}`;
}

export function cassetteWrong(c: unknown): string | undefined {
  if (!isObj(c)) return 'not a JSON object';
  if (typeof c.provider !== 'string' || !c.provider) return 'no provider';
  if (c.endpoint !== undefined && !ENDPOINTS.includes(c.endpoint as string)) return `endpoint must be one of ${ENDPOINTS.join(', ')} (absent for chat)`;
  if (c.take !== undefined && !(Number.isInteger(c.take) && (c.take as number) >= 1)) return 'take must be a whole number from 1';
  if (c.run !== undefined && typeof c.run !== 'string') return 'run must be a string';
  if (c.record_missing !== undefined && c.record_missing !== true) return 'record_missing must be true (or absent)';
  if (!isObj(c.request) || !isObj(c.request.body)) return 'no request body (an object)';
  const r = c.response;
  if (!isObj(r)) return 'no response';
  if (!Number.isInteger(r.status) || (r.status as number) < 0 || (r.status as number) > 599) return 'response.status must be an HTTP status (0 for a failure with no answer)';
  if (r.headers !== undefined && (!isObj(r.headers) || Object.values(r.headers).some((v) => typeof v !== 'string'))) return 'response.headers must map names to strings';
  if (r.after_ms !== undefined && !isMs(r.after_ms)) return 'response.after_ms must be a number of milliseconds';
  if (r.broken !== undefined && typeof r.broken !== 'string') return 'response.broken must be a string';
  if (r.broken_after_ms !== undefined && !isMs(r.broken_after_ms)) return 'response.broken_after_ms must be a number of milliseconds';
  if (r.broken_reason !== undefined && !REASONS.includes(r.broken_reason as string)) return `response.broken_reason must be one of ${REASONS.join(', ')}`;
  if (r.failure !== undefined) {
    const f = r.failure;
    if (!isObj(f) || !REASONS.includes(f.reason as string) || typeof f.message !== 'string') return `response.failure must be {"reason": one of ${REASONS.join(', ')}, "message": a string}`;
    if (f.retry_after !== undefined && typeof f.retry_after !== 'string') return 'response.failure.retry_after must be a string';
    if (f.error_type !== undefined && typeof f.error_type !== 'string') return 'response.failure.error_type must be a string';
  }
  if (r.chunks !== undefined) return piecesWrong('response.chunks', r.chunks, 'data', (v) => v !== undefined, 'an event (JSON, or its text)');
  if (r.audio !== undefined) return piecesWrong('response.audio', r.audio, 'base64', (v) => typeof v === 'string', 'a base64 string');
  if (r.failure === undefined && r.body === undefined && r.broken === undefined) return 'response has none of body, chunks, audio, broken or failure';
  return undefined;
}

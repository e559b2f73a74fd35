/**
 * A cassette file's members checked as a person may have edited them: what is wrong, named by its path; undefined when it
 * is one. A member replay would not read (a misspelt one, or one another member makes moot) is a mistake too: it would
 * be ignored without a word.
 */
import { didYouMean } from '../../internal/did-you-mean.js';

const REASONS = ['refused', 'timeout', 'status', 'broken', 'unavailable', 'missing', 'stopping'];
const ENDPOINTS = ['embeddings', 'responses', 'speech'];

const MEMBERS = {
  cassette: ['provider', 'recorded_at', 'endpoint', 'request', 'response', 'take', 'run', 'record_missing'],
  'request': ['method', 'url', 'headers', 'body'],
  'response': ['status', 'headers', 'body', 'after_ms', 'chunks', 'audio', 'broken', 'broken_after_ms', 'broken_reason', 'failure'],
  'response.failure': ['reason', 'message', 'retry_after', 'error_type'],
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isMs = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** A list of `{after_ms, …}` pieces, each with `member` of the type `ok` checks. */
function piecesWrong(at: string, list: unknown, member: string, ok: (v: unknown) => boolean, what: string): string | undefined {
  if (!Array.isArray(list)) return `${at} must be a list`;
  const i = list.findIndex((p) => !isObj(p) || !isMs(p.after_ms) || !ok(p[member]));
  return i < 0 ? undefined : `${at}[${i}] must be {"after_ms": milliseconds, "${member}": ${what}}`;
}

/** A member of `o` (at `at`) replay does not know, named with the one it most likely meant, else those it knows. */
function unknownMember(at: keyof typeof MEMBERS, o: Obj): string | undefined {
  const odd = Object.keys(o).find((k) => !MEMBERS[at].includes(k));
  if (odd === undefined) return undefined;
  return `${at === 'cassette' ? '' : `${at}: `}unknown member "${odd}"${didYouMean(odd, MEMBERS[at]) || ` (known: ${MEMBERS[at].join(', ')})`}`;
}

/** Members of a response that say two answers at once: replay would read one and drop the other. */
function contradiction(r: Obj, endpoint: unknown): string | undefined {
  const kinds = (['body', 'chunks', 'audio'] as const).filter((k) => r[k] !== undefined);
  if (r.failure !== undefined && kinds.length) return `response has both failure and ${kinds[0]}: a failure the gateway passed over holds no answer`;
  if (kinds.length > 1) return `response has both ${kinds[0]} and ${kinds[1]}: a whole answer (body), a stream (chunks) or speech (audio), one of them`;
  if (r.audio !== undefined && endpoint !== 'speech') return 'response.audio is speech\'s: this cassette\'s endpoint is not "speech"';
  if (r.chunks !== undefined && (endpoint === 'speech' || endpoint === 'embeddings')) return `response.chunks is a stream's: ${String(endpoint)} is never streamed (speech keeps audio)`;
  const stray = (['broken_after_ms', 'broken_reason'] as const).find((k) => r[k] !== undefined && r.broken === undefined);
  if (stray) return `response.${stray} without response.broken: nothing broke`;
  return undefined;
}

export function cassetteWrong(c: unknown): string | undefined {
  if (!isObj(c)) return 'not a JSON object';
  const odd = unknownMember('cassette', c) ?? (isObj(c.request) ? unknownMember('request', c.request) : undefined) ?? (isObj(c.response) ? unknownMember('response', c.response) : undefined);
  if (odd) return odd;
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
    const oddFailure = unknownMember('response.failure', f);
    if (oddFailure) return oddFailure;
  }
  const both = contradiction(r, c.endpoint);
  if (both) return both;
  if (r.chunks !== undefined) return piecesWrong('response.chunks', r.chunks, 'data', (v) => v !== undefined, 'an event (JSON, or its text)');
  if (r.audio !== undefined) return piecesWrong('response.audio', r.audio, 'base64', (v) => typeof v === 'string', 'a base64 string');
  if (r.failure === undefined && r.body === undefined && r.broken === undefined) return 'response has none of body, chunks, audio, broken or failure';
  return undefined;
}

/** A provider as a cassette is checked against the providers file: its name, whether it answers Responses, its models' kinds. */
export interface FileProvider {
  name: string;
  responses?: boolean;
  models: { kind?: 'chat' | 'embedding' | 'speech' }[];
}

/** Why the providers file would never ask this cassette's provider for its exchange (a replay would miss it, unsaid until then). */
export function providerWrong(c: { provider: string; endpoint?: string }, providers: readonly FileProvider[]): string | undefined {
  const p = providers.find((x) => x.name === c.provider);
  const names = providers.map((x) => x.name);
  if (!p) return `provider "${c.provider}" is not in the providers file${didYouMean(c.provider, names) || ` (it names ${names.join(', ') || 'none'})`}`;
  if (c.endpoint === 'responses' && !p.responses) return `provider ${p.name} has no responses: true in the providers file, and this is a Responses exchange`;
  const kind = c.endpoint === 'speech' ? 'speech' : c.endpoint === 'embeddings' ? 'embedding' : undefined;
  if (kind && !p.models.some((m) => m.kind === kind)) return `provider ${p.name} has no ${kind}_models in the providers file, and this is ${c.endpoint === 'embeddings' ? 'an' : 'a'} ${c.endpoint} exchange`;
  return undefined;
}

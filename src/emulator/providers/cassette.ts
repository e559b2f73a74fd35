import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpError } from '../http/http.js';
import { ProviderFailure, type ProviderAdapter, type ProviderModel, type UpstreamChat, type UpstreamReply } from './types.js';

type Body = Record<string, unknown>;

/** `record`: every exchange kept; `replay`: answers from cassettes only; `replay-record`: the missing ones asked and kept. */
export type CassetteMode = 'record' | 'replay' | 'replay-record';

/** One upstream exchange as a file a person reads and edits (JSON, indented). */
export interface Cassette {
  provider: string;
  /** `embeddings` or `responses` for those exchanges; chat when absent. */
  endpoint?: Endpoint;
  recorded_at: string;
  request: { method: 'POST'; url: string; headers: Record<string, string>; body: Body };
  response: {
    status: number;
    headers: Record<string, string>;
    /** A whole answer: its JSON (or its text when it is not JSON). */
    body?: unknown;
    /** A whole answer: the milliseconds it took (replayed as a wait, scaled by --replay-timing). */
    after_ms?: number;
    /** A stream: each event's data, parsed when it is JSON, with the milliseconds since the request. */
    chunks?: { after_ms: number; data: unknown }[];
    /** Where the upstream broke the stream, after the chunks above. */
    broken?: string;
  };
}

/** JSON with every object's keys sorted: the same request, however its members were ordered. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().filter((k) => (v as Body)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((v as Body)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** What a request asks (its model, messages, tools, parameters), to whom: equal keys, the same answer. */
export const matchKey = (provider: string, body: Body, endpoint: Endpoint = 'chat') => createHash('sha256').update(`${provider}\n${endpoint === 'chat' ? '' : `${endpoint}\n`}${canonical(body)}`).digest('hex');

type Endpoint = 'chat' | 'embeddings' | 'responses';
type Live = ProviderAdapter & { url?: string; embeddingsUrl?: string; responsesUrl?: string };

const text = (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data));
const parsed = (t: string): unknown => {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
};

/** The members of two requests that differ (top level), for naming the nearest cassette. */
function differences(a: Body, b: Body): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonical(a[k]) !== canonical(b[k])).sort();
}

/** A stream's events read to their end (check-drift reads what the gateway would relay). */
export async function* ssePayloadsOf(events: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const data of events) {
    yield data;
    if (data === '[DONE]') return;
  }
}

/** Every cassette of a folder, by file name, oldest name first. */
export function readCassettes(dir: string): { file: string; cassette: Cassette }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      let cassette: Cassette;
      try {
        cassette = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Cassette;
      } catch (err) {
        throw new Error(`cassette ${join(dir, file)} is not JSON: ${(err as Error).message}`, { cause: err });
      }
      if (!cassette?.request?.body || !cassette.response || typeof cassette.provider !== 'string') throw new Error(`cassette ${join(dir, file)} has no provider, request body or response`);
      return { file, cassette };
    });
}

/** A folder of cassettes: loaded once, grown as exchanges are recorded. */
export class CassetteDeck {
  private readonly byKey = new Map<string, { file: string; cassette: Cassette }>();

  /**
   * `timing` scales the recorded waits on replay: 1 as recorded, 0.5 half as long, 0 none. A replayed
   * chunk is never sent before its recorded time (times `timing`) since the request.
   */
  constructor(
    private readonly dir: string,
    readonly mode: CassetteMode,
    private readonly timing = 1,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const { file, cassette } of readCassettes(dir)) this.byKey.set(matchKey(cassette.provider, cassette.request.body, cassette.endpoint), { file, cassette });
  }

  /** The adapter as this deck's mode has it: recording behind it, or answering for it. */
  wrap(live: Live): ProviderAdapter {
    return {
      name: live.name,
      models: (): ProviderModel[] => live.models(),
      chat: (req: UpstreamChat) => this.chat(live, req, 'chat'),
      embeddings: live.embeddings ? (req: UpstreamChat) => this.chat(live, req, 'embeddings') : undefined,
      responses: live.responses ? (req: UpstreamChat) => this.chat(live, req, 'responses') : undefined,
      // Audio is not kept: speech goes to the live upstream when recording, and is not served on replay.
      speech: this.mode === 'record' && live.speech ? (req: UpstreamChat) => live.speech!(req) : undefined,
    };
  }

  private async chat(live: Live, req: UpstreamChat, endpoint: Endpoint): Promise<UpstreamReply> {
    const key = matchKey(live.name, req.body, endpoint);
    if (this.mode !== 'record') {
      const found = this.byKey.get(key);
      if (found) return replay(found.cassette, this.timing, req.signal);
      if (this.mode === 'replay') throw this.miss(live.name, req.body);
    }
    return this.record(live, req, key, endpoint);
  }

  private miss(provider: string, body: Body): HttpError {
    let nearest: { file: string; diff: string[] } | undefined;
    for (const { file, cassette } of this.byKey.values()) {
      const diff = [...(cassette.provider === provider ? [] : ['provider']), ...differences(cassette.request.body, body)];
      if (!nearest || diff.length < nearest.diff.length) nearest = { file, diff };
    }
    const near = nearest ? `; the nearest is ${join(this.dir, nearest.file)}, which differs in ${nearest.diff.join(', ')}` : `; ${this.dir} holds none`;
    return new HttpError(404, `replay: no cassette answers this request to ${provider} (model ${String(body.model)})${near}`, 'not_found');
  }

  private async record(live: Live, req: UpstreamChat, key: string, endpoint: Endpoint): Promise<UpstreamReply> {
    const started = Date.now();
    const reply = endpoint === 'embeddings' ? await live.embeddings!(req) : endpoint === 'responses' ? await live.responses!(req) : await live.chat(req);
    const cassette: Cassette = {
      provider: live.name,
      recorded_at: new Date(started).toISOString(),
      ...(endpoint === 'chat' ? {} : { endpoint }),
      request: { method: 'POST', url: (endpoint === 'embeddings' ? live.embeddingsUrl : endpoint === 'responses' ? live.responsesUrl : live.url) ?? '', headers: { 'content-type': 'application/json' }, body: req.body },
      response: { status: reply.status, headers: reply.headers },
    };
    const file = `${live.name}-${String(req.body.model).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}-${key.slice(0, 12)}.json`;
    const save = () => {
      const path = join(this.dir, file);
      writeFileSync(`${path}.tmp`, `${JSON.stringify(cassette, null, 2)}\n`);
      renameSync(`${path}.tmp`, path);
      this.byKey.set(key, { file, cassette });
    };
    if (reply.kind === 'json') {
      cassette.response.after_ms = Date.now() - started;
      cassette.response.body = parsed(reply.text);
      save();
      return reply;
    }
    const chunks: { after_ms: number; data: unknown }[] = (cassette.response.chunks = []);
    const source = reply.events;
    async function* tee(): AsyncGenerator<string> {
      try {
        for await (const data of source) {
          chunks.push({ after_ms: Date.now() - started, data: parsed(data) });
          // Kept at [DONE]: a reader stops there, and this generator is never resumed.
          if (data === '[DONE]') save();
          yield data;
        }
      } catch (err) {
        cassette.response.broken = (err as Error).message;
        save();
        throw err;
      }
      if (chunks.at(-1)?.data !== '[DONE]') save();
    }
    return { ...reply, events: tee() };
  }
}

/**
 * Resolves once `at` (a performance.now() time) has come, or at once when the caller has gone (the
 * rest of a stream nobody reads goes out unpaced).
 */
function until(at: number, signal: AbortSignal): Promise<void> | undefined {
  if (at <= performance.now() || signal.aborted) return undefined;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    // A timer counts from the loop's clock, which may lag: it can fire early, and is set again then.
    const tick = () => {
      const left = at - performance.now();
      if (left <= 0) done();
      else timer = setTimeout(tick, Math.ceil(left));
    };
    signal.addEventListener('abort', done, { once: true });
    tick();
  });
}

/** A recorded answer, as the upstream gave it and when: each chunk at its recorded time since the request, times `timing`. */
async function replay(c: Cassette, timing: number, signal: AbortSignal): Promise<UpstreamReply> {
  const started = performance.now();
  const due = (ms: unknown) => started + (typeof ms === 'number' && ms > 0 ? ms * timing : 0);
  const { status, headers, body, chunks, broken } = c.response;
  if (!chunks) {
    await until(due(c.response.after_ms), signal);
    return { kind: 'json', status, headers, text: text(body) };
  }
  async function* events(): AsyncGenerator<string> {
    for (const chunk of chunks!) {
      await until(due(chunk.after_ms), signal);
      yield text(chunk.data);
    }
    if (broken !== undefined) throw new ProviderFailure('broken', broken);
  }
  return { kind: 'stream', status, headers, events: events() };
}

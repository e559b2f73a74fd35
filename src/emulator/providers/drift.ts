import { ProviderFailure, type ProviderAdapter } from './types.js';
import { lastTakes, ssePayloadsOf, type Cassette } from './cassette.js';
import type { GatewayConfig } from './config.js';
import { OpenAICompatible } from './openai-compatible.js';

/** Each `path: type` an answer holds (array items merged under `[]`): its shape, its values left out. */
export function shapeOf(v: unknown, path = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) {
    out.add(`${path}: array`);
    for (const item of v) shapeOf(item, `${path}[]`, out);
  } else if (v && typeof v === 'object') {
    out.add(`${path || '.'}: object`);
    for (const [k, x] of Object.entries(v)) shapeOf(x, `${path}.${k}`, out);
  } else out.add(`${path || '.'}: ${v === null ? 'null' : typeof v}`);
  return out;
}

const parsed = (t: string): unknown => {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
};

export interface DriftReport {
  file: string;
  /** `path: type` entries only the recording has (`-`) or only the live answer has (`+`); empty when the same. */
  changes: string[];
  /** Why the upstream could not be asked (then no shape is compared). */
  error?: string;
  /** The error is the provider's being down (refused, timed out: no HTTP answer), which says nothing of a drift. */
  down?: boolean;
}

/** A recorded exchange's answer shape: a whole answer's body, or a stream's events under `chunk` and its end. */
function recordedShape(c: Cassette): Set<string> {
  const { status, body, chunks, audio, headers } = c.response;
  const out = new Set<string>(status ? [`status: ${status}`] : []);
  // A failure passed over (a 503): its status alone; one with no HTTP answer (refused), nothing.
  if (c.response.failure) return out;
  if (audio) return out.add(`audio: ${headers['content-type'] ?? 'none'}`);
  if (!chunks) return shapeOf(body, 'body', out);
  for (const chunk of chunks) if (chunk.data !== '[DONE]') shapeOf(chunk.data, 'chunk', out);
  if (chunks.at(-1)?.data === '[DONE]') out.add('end: [DONE]');
  if (c.response.broken !== undefined) out.add('end: broken');
  return out;
}

/** A recorded speech request asked again: its status and audio type (or a refusal's shape) into `live`; an error, if it cannot be. */
async function askSpeech(cassette: Cassette, adapter: ProviderAdapter, live: Set<string>): Promise<string | undefined> {
  if (!adapter.speech) return `provider ${cassette.provider} has no speech_models in the providers file`;
  const reply = await adapter.speech({ body: cassette.request.body, stream: false, signal: AbortSignal.timeout(120_000) });
  live.add(`status: ${reply.status}`);
  let text = '';
  for await (const piece of reply.audio) if (reply.status >= 300) text += piece.toString('utf8');
  if (reply.status < 300) live.add(`audio: ${reply.headers['content-type'] ?? 'none'}`);
  else shapeOf(parsed(text), 'body', live);
  return undefined;
}

/** A recorded chat, embeddings or Responses request asked again: its answer's shape into `live`; an error, if it cannot be. */
async function askAnswer(cassette: Cassette, adapter: ProviderAdapter, live: Set<string>): Promise<string | undefined> {
  const call = cassette.endpoint === 'embeddings' && adapter.embeddings ? adapter.embeddings.bind(adapter) : cassette.endpoint === 'responses' ? adapter.responses : adapter.chat.bind(adapter);
  if (!call) return `provider ${cassette.provider} has no responses: true in the providers file`;
  const reply = await call({ body: cassette.request.body, stream: cassette.request.body.stream === true, signal: AbortSignal.timeout(120_000) });
  live.add(`status: ${reply.status}`);
  if (reply.kind === 'json') shapeOf(parsed(reply.text), 'body', live);
  else {
    try {
      for await (const data of ssePayloadsOf(reply.events)) {
        if (data === '[DONE]') live.add('end: [DONE]');
        else shapeOf(parsed(data), 'chunk', live);
      }
    } catch (err) {
      // Asked, and answered in part: a break is the stream's end, as a recording keeps it (`broken`).
      if (!(err instanceof ProviderFailure)) throw err;
      live.add('end: broken');
    }
  }
  return undefined;
}

/** The provider gave no HTTP answer at all: refused, or timed out. */
const isDown = (err: unknown): boolean => err instanceof ProviderFailure && err.status === undefined && (err.reason === 'refused' || err.reason === 'timeout');

/** Sends a recorded request to its provider again and says what changed in the answer's shape. */
export async function checkDrift(file: string, cassette: Cassette, adapter: ProviderAdapter): Promise<DriftReport> {
  const live = new Set<string>();
  try {
    const error = await (cassette.endpoint === 'speech' ? askSpeech : askAnswer)(cassette, adapter, live);
    if (error) return { file, changes: [], error };
  } catch (err) {
    if (err instanceof ProviderFailure && err.status !== undefined) live.add(`status: ${err.status}`);
    // Down when recorded (a failure with no HTTP answer) and down now: what replay answers is what it does.
    else if (isDown(err) && cassette.response.failure && !cassette.response.status) return { file, changes: [] };
    else return { file, changes: [], error: (err as Error).message, ...(isDown(err) ? { down: true } : {}) };
  }
  const recorded = recordedShape(cassette);
  const changes = [...[...recorded].filter((s) => !live.has(s)).map((s) => `- ${s}`), ...[...live].filter((s) => !recorded.has(s)).map((s) => `+ ${s}`)];
  return { file, changes };
}

/**
 * Every recorded request of `dir` (its last take: a retry's earlier ones are not asked again) sent again to its provider in
 * `config`, one at a time. A cassette replay would refuse (of a provider not in `config`, or of an endpoint its provider does
 * not serve) stops it before any is asked, as it stops a replay: CassetteFileError.
 */
export async function checkDriftAll(dir: string, config: GatewayConfig, report: (r: DriftReport) => void): Promise<DriftReport[]> {
  const adapters = new Map(config.providers.map((p) => [p.name, new OpenAICompatible(p)]));
  const out: DriftReport[] = [];
  try {
    for (const { file, cassette } of lastTakes(dir, config.providers)) {
      const r = await checkDrift(file, cassette, adapters.get(cassette.provider)!);
      report(r);
      out.push(r);
    }
  } finally {
    await Promise.all([...adapters.values()].map((a) => a.close()));
  }
  return out;
}

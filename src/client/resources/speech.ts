import { bodyChunks } from '../body-chunks.js';
import { ValidationError } from '../errors.js';
import { shownGiven } from '../../internal/shape.js';
import { Resource, callHeaders, type CallOptions } from './shared.js';

export interface SpeechTurn {
  text: string;
  voice?: string | undefined;
  instructions?: string | undefined;
}

export type SpeechReference =
  | { type: 'input_audio'; input_audio: { data: string } }
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } };

export interface SpeechRequest {
  input: string | SpeechTurn[];
  model: string;
  /** Fallback models, tried in order after `model` (a gateway's and the emulator's; the spec shows none for speech). */
  models?: string[] | undefined;
  voice: string;
  /** `pcm` (16-bit little-endian samples, `audio/pcm`) when absent, as the service's default. */
  response_format?: 'mp3' | 'pcm' | undefined;
  speed?: number | undefined;
  instructions?: string | undefined;
  input_references?: SpeechReference[] | undefined;
  session_id?: string | undefined;
  user?: string | undefined;
  provider?: Record<string, unknown> | undefined;
}

export interface SpeechStream {
  contentType: string;
  requestId: string | undefined;
  /** The generation the audio is (its `x-generation-id` header, where the service sends one): `GET /generation?id=` has its cost. */
  generationId: string | undefined;
  /** Audio bytes as they arrive. */
  chunks: AsyncIterable<Uint8Array, void, undefined>;
  /**
   * With `routerMetadata: true`, the routing metadata the service sent in headers (audio has no body to carry it):
   * `X-Router-Metadata` and `X-OpenRouter-Metadata` as `router_metadata` and `openrouter_metadata` (routingMetadata() reads either).
   */
  metadata?: { router_metadata?: unknown; openrouter_metadata?: unknown } | undefined;
}

/** A metadata header's JSON; undefined when absent or not JSON. */
function headerJson(value: string | string[] | undefined): unknown {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export class Speech extends Resource {
  /** Starts synthesis; the audio is streamed, never buffered whole. Retried on an error answer, never once it may have been carried out. */
  async create(params: SpeechRequest, opts: CallOptions = {}): Promise<SpeechStream> {
    // A multiplier of 0 or less means nothing; a NaN or Infinity would go as JSON's null (before, sent all the same).
    const speed = params.speed;
    if (speed !== undefined && !(typeof speed === 'number' && Number.isFinite(speed) && speed > 0)) throw new ValidationError(`speed must be a number over 0 (a multiplier: 1 is normal), not ${shownGiven(speed)}: nothing was sent`);
    const path = '/audio/speech';
    const res = await this.core.send({
      method: 'POST',
      path,
      body: params,
      headers: callHeaders(opts),
      accept: 'audio/*',
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      retry: 'paid',
    });
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    const metadata = opts.routerMetadata ? { router_metadata: headerJson(res.headers['x-router-metadata']), openrouter_metadata: headerJson(res.headers['x-openrouter-metadata']) } : undefined;
    return { contentType: first(res.headers['content-type']) ?? 'application/octet-stream', requestId: res.requestId, generationId: first(res.headers['x-generation-id']) || undefined, chunks: bodyChunks(res, this.core.url(path), opts.signal), ...(metadata && { metadata }) };
  }
}

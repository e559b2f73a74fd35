import type { EmbeddingResponse, ProviderPreferences } from '../types.js';
import { answeringHead, Resource, type AnsweringOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

export interface EmbeddingsRequest {
  input: string | string[] | number[] | number[][] | unknown[];
  model: string;
  /** Fallback models, tried in order after `model` (a gateway's; the service's embeddings take no such list). */
  models?: string[] | undefined;
  dimensions?: number | undefined;
  encoding_format?: 'float' | 'base64' | undefined;
  input_type?: string | undefined;
  provider?: ProviderPreferences | undefined;
  user?: string | undefined;
}

/** Decodes a base64 embedding (little-endian float32) back into numbers. */
export function decodeEmbedding(value: number[] | string): number[] {
  if (Array.isArray(value)) return value;
  const bytes = Buffer.from(value, 'base64');
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i += 4) out.push(bytes.readFloatLE(i));
  return out;
}

export class Embeddings extends Resource {
  /** `answering`: as chat.create's, the answer's generation id as its head arrives. */
  create(params: EmbeddingsRequest, opts: AnsweringOptions = {}): Promise<EmbeddingResponse> {
    const [call, head] = answeringHead(opts);
    return this.request('POST', '/embeddings', call, { body: params, retry: 'paid', ...head }, SHAPES.embeddings);
  }
}

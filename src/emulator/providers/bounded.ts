/** An upstream's body read within bounds: a provider that sends without end cannot fill the gateway's memory. */
import { ProviderFailure } from './types.js';
import { answeredCause } from './upstream-cause.js';
import { cutText } from '../../internal/first-words.js';

export { answerText } from './coded-refusal.js';

/** Default of `max_answer_mb`: the largest whole answer (or one stream event) taken from a provider. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** How much of a refusal's body is kept for its words; the rest is let go. */
export const REFUSAL_BYTES = 4096;

/**
 * A status the gateway passes over, in words: its body's first bytes, its `Retry-After`; for a 401 or
 * 403, `keyHint` (keyHint()): the key it was sent is the first thing to look at; the cause its words name.
 */
export function statusFailure(name: string, status: number, text: string, retryAfter: string | undefined, keyHint = ''): ProviderFailure {
  const hint = keyHint && (status === 401 || status === 403) ? keyHint : status === 404 ? NOT_FOUND_HINT : undefined;
  const failure = new ProviderFailure('status', `${name}: HTTP ${status}${text ? ` ${cutText(text, 200)}` : ''}`, status, retryAfter, hint);
  const cause = answeredCause(status, text);
  // Only a cause of its own is kept (a recorded failure's cassette says it); any other is the provider failing.
  if (cause !== 'provider_unavailable') failure.errorType = cause;
  return failure;
}

/** A 404: the path (a base_url without its /v1, the commonest slip) or the upstream's model name is not there. */
const NOT_FOUND_HINT = "is base_url the API's root (for Ollama, vLLM and OpenAI it ends in /v1), and the upstream model name one it serves?";

/** What to check when a provider refuses the gateway's key (or its lack of one): the providers file's `api_key_env`. */
export function keyHint(config: { keyEnv?: string; apiKey?: string }): string {
  if (!config.keyEnv) return "it was sent no key: name the variable that holds its key with api_key_env in the providers file";
  if (!config.apiKey) return `it was sent no key: ${config.keyEnv} (its api_key_env) is not set`;
  return `is ${config.keyEnv} (its api_key_env) a key this provider takes?`;
}

/** The first `max` bytes of a body as text (a refusal's words), the rest let go; '' when it cannot be read. */
export async function headText(body: AsyncIterable<Buffer>, max = REFUSAL_BYTES): Promise<string> {
  return (await headBytes(body, max)).toString('utf8').slice(0, max);
}

/** The first `max` bytes of a body (at least; a coded refusal is decoded from them), the rest let go. */
export async function headBytes(body: AsyncIterable<Buffer>, max: number): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let size = 0;
  try {
    for await (const piece of body) {
      pieces.push(piece);
      size += piece.length;
      if (size >= max) break;
    }
  } catch {
    // what came before the break is kept
  }
  return Buffer.concat(pieces);
}

export const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`;

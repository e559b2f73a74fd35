/**
 * Speech's formats as the spec has them: `mp3` or `pcm` (the default), answered as `audio/mpeg` and
 * `audio/pcm` (16-bit little-endian). An OpenAI-compatible upstream's own default may differ (OpenAI's
 * is mp3) and its `Content-Type` may name no format (Prism's `audio/*`, `application/octet-stream`), so
 * the gateway asks for the format by name and labels the answer itself.
 */
import { bad } from '../http/validate.js';

export type SpeechFormat = 'mp3' | 'pcm';

export const SPEECH_TYPE: Record<SpeechFormat, string> = { mp3: 'audio/mpeg', pcm: 'audio/pcm' };

/** The names other servers give each format's audio. */
const SAME_FORMAT: Record<SpeechFormat, RegExp> = { mp3: /^audio\/(x-)?(mpeg3?|mp3)$/, pcm: /^audio\/(x-)?(pcm|l16|raw)$/ };

/** The format a request asks for: `pcm` when it names none; anything else is its 400. */
export function speechFormat(body: Record<string, unknown>): SpeechFormat {
  const format = body.response_format ?? 'pcm';
  if (format !== 'mp3' && format !== 'pcm') bad('response_format must be mp3 or pcm');
  return format;
}

/**
 * The `Content-Type` of an answer in `format` whose upstream said `upstream`: the spec's for the format,
 * unless the upstream names audio of another format (one that ignored the format asked), which is what
 * its bytes are.
 */
export function speechType(format: SpeechFormat, upstream: string | undefined): string {
  const named = (upstream ?? '').split(';')[0]!.trim().toLowerCase();
  const concrete = /^audio\/[a-z0-9][\w.+-]*$/.test(named);
  return concrete && !SAME_FORMAT[format].test(named) ? (upstream as string) : SPEECH_TYPE[format];
}

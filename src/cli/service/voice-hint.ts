/**
 * A refused voice gets a guess from the model's `supported_voices` in the service's model list (the copy
 * `router models` keeps when fresh), as a mistyped model id does; looked up only after a 400 that speaks of a voice, briefly.
 * The voice refused is the one sent that the list does not hold, whatever the service's words: its
 * refusal only decides whether the voice must be named in the hint (it is, unless the message quotes it).
 */
import type { RouterClient } from '../../client/index.js';
import { APIError } from '../../client/errors.js';
import { closest } from '../../internal/did-you-mean.js';
import { sourceName, type Settings } from '../../config/settings.js';

export async function addVoiceGuess(err: unknown, client: RouterClient, o: { env: NodeJS.ProcessEnv; settings: Settings; model: string; voices: string[]; typed: boolean }): Promise<void> {
  // Only a refusal that speaks of a voice is worth a look at the model list (a bad speed is not).
  if (!(err instanceof APIError) || err.status !== 400 || !o.voices.length || !/voice/i.test(err.message)) return;
  const { modelCatalog } = await import('./model-catalog.js');
  const { DEFAULT_API_ROOT } = await import('../../client/core.js');
  const models = await modelCatalog(client, { env: o.env, apiRoot: o.settings.apiRoot ?? DEFAULT_API_ROOT, signal: AbortSignal.timeout(3000) }).catch(() => undefined);
  const known = (models?.find((m) => m.id === o.model) as { supported_voices?: unknown } | undefined)?.supported_voices;
  if (!Array.isArray(known)) return;
  const voices = known.filter((v): v is string => typeof v === 'string');
  const voice = o.voices.find((v) => !voices.includes(v));
  if (voice === undefined || !voices.length) return;
  const near = closest(voice, voices, Math.max(2, Math.floor(voice.length / 3)));
  // A voice the user did not type (ROUTER_VOICE, a profile) is named by where it came from.
  const from = !o.typed && voice === o.settings.voice && o.settings.from.voice ? `from ${sourceName(o.settings.from.voice)}` : '';
  const listed = voices.every((v) => err.message.includes(v)) ? '' : `the voices of ${o.model}: ${voices.join(', ')}`;
  const named = err.message.includes(voice) ? '' : `voice "${voice}" is not one of ${o.model}'s`;
  const parts = [named, from, near ? `did you mean ${near}?` : '', listed].filter(Boolean);
  if (parts.length) Object.assign(err, { hint: ` (${parts.join('; ')})` });
}

import type { Model } from '../../../client/resources/models.js';
import { DEFAULT_ENV, type Profile } from '../../../config/fields.js';
import { modalities } from '../../service/model-catalog.js';
import { MODEL_PURPOSES, type DynamicKind, type ModelPurpose } from '../../flags/flags.js';

/** What a Tab after a model flag asks for: the kind of model (none: any) and whether aliases come too. */
export interface ModelAsk {
  purpose?: ModelPurpose;
  aliases: boolean;
}

export function modelAsk(kind: DynamicKind): ModelAsk | undefined {
  if (kind === 'models' || kind === 'model-ids') return { aliases: kind === 'models' };
  const m = /^(\w+)-model(s|-ids)$/.exec(kind);
  return m ? { purpose: m[1] as ModelPurpose, aliases: m[2] === 's' } : undefined;
}

/** The kind of a listed model, by what it outputs: embeddings, speech, else a chat model (text, images, not said). */
export function purposeOf(m: Model): ModelPurpose {
  const { output } = modalities(m);
  return output.includes('embeddings') ? 'embedding' : output.includes('speech') ? 'speech' : 'chat';
}

/** The profile setting and the variable that give a command's default model of each kind. */
const DEFAULTS = { chat: 'model', speech: 'speech_model', embedding: 'embed_model' } as const;

/** The ids set as defaults of the kinds asked for: in the profiles, then in the environment. */
export function configuredModels(ask: ModelAsk, profiles: readonly Profile[], fromEnv: (name: string) => string | undefined): string[] {
  const fields = (ask.purpose ? [ask.purpose] : MODEL_PURPOSES).map((p) => DEFAULTS[p]);
  const set = profiles.flatMap((p) => fields.map((f) => p[f]));
  return [...set, ...fields.map((f) => fromEnv(DEFAULT_ENV[f]))].filter((m): m is string => typeof m === 'string' && m !== '');
}

/**
 * What is offered, in this order: the aliases, the configured ids, the service's list; where the list says an id
 * is a model of another kind than the command takes (an embedding model after `speak --model`), it is left out.
 */
export function offeredModels(ask: ModelAsk, aliases: Record<string, string>, configured: string[], listed: Model[] = []): string[] {
  const kinds = new Map(listed.map((m) => [m.id, purposeOf(m)]));
  const fits = (id: string) => !ask.purpose || (kinds.get(id) ?? ask.purpose) === ask.purpose;
  const names = ask.aliases ? Object.keys(aliases).sort().filter((a) => fits(aliases[a]!)) : [];
  return [...new Set([...names, ...configured.filter(fits), ...listed.map((m) => m.id).filter(fits)])];
}

/**
 * Model aliases (src/kit/model-aliases.ts) where the CLI takes a model id: a --model flag's value, and a
 * model setting's (a role's, the profile's, the environment's), that is not a model id is looked up.
 * Loaded only then: a run whose models are all ids reads no file.
 */
import type { Command } from '../commander.js';
import { isModelId, MODEL_ID_SYNTAX } from '../../client/facts.js';
import { sourceName, type Settings } from '../../config/settings.js';
import { didYouMean } from '../../internal/did-you-mean.js';
import { visible } from '../../internal/visible.js';
import { aliasedModel, readAliases } from '../../kit/model-aliases.js';
import { usage } from '../exit-codes.js';
import { cliErrorOf } from '../kit-words.js';
import { modelOrAlias, modelShapeHint } from './options.js';

function aliases(env: NodeJS.ProcessEnv): Record<string, string> {
  try {
    return readAliases(env);
  } catch (err) {
    throw cliErrorOf(err) ?? err;
  }
}

function modelOf(all: Record<string, string>, name: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return aliasedModel(all, name, env);
  } catch (err) {
    throw cliErrorOf(err) ?? err;
  }
}

/** Why a value is neither a model id nor an alias: the shape's words, then the alias meant, if any. */
function unknownWhy(value: string, all: Record<string, string>): string {
  const meant = didYouMean(value, Object.keys(all));
  if (meant) return `must look like ${MODEL_ID_SYNTAX} or name an alias${meant}`;
  return `must look like ${MODEL_ID_SYNTAX}${modelShapeHint(value) || ''}${Object.keys(all).length ? '; no alias of that name either (router aliases list)' : ''}`;
}

/** The aliases a command's flags were given as, by attribute (see resolveModelFlags), keyed by its options object. */
const typedAliases = new WeakMap<object, Record<string, string>>();

/** Each --model given as an alias becomes its model id; an unknown one is refused as a malformed id is. */
export function resolveModelFlags(cmd: Command, opts: Record<string, unknown>, env: NodeJS.ProcessEnv, path: string): void {
  for (const o of cmd.options) {
    const attr = o.attributeName();
    const value = opts[attr];
    if (o.parseArg !== modelOrAlias || typeof value !== 'string' || isModelId(value)) continue;
    const all = aliases(env);
    const model = modelOf(all, value, env);
    if (model === undefined) throw usage(`option '${o.flags}' argument '${visible(value)}' is invalid: ${unknownWhy(value, all)}; see "${path} --help"`);
    opts[attr] = model;
    typedAliases.set(opts, { ...typedAliases.get(opts), [attr]: value });
  }
}

/** The alias a flag was given as, before resolveModelFlags made it the model id (`roles save` keeps the alias, as llm's templates do). */
export function typedAlias(opts: object, attr: string): string | undefined {
  return typedAliases.get(opts)?.[attr];
}

const MODEL_SETTINGS = ['model', 'speechModel', 'embedModel'] as const;

/**
 * The settings with each model setting that names an alias given its model id. A role's model that is
 * neither is refused here, naming the role; the profile's and the environment's are left to their checks.
 */
export function settingsWithAliases(s: Settings, env: NodeJS.ProcessEnv): Settings {
  const all = aliases(env);
  const out = { ...s };
  for (const key of MODEL_SETTINGS) {
    const value = s[key];
    const from = s.from[key];
    if (value === undefined || isModelId(value)) continue;
    const model = modelOf(all, value, env);
    if (model !== undefined) out[key] = model;
    else if (from?.kind === 'role') throw usage(`${sourceName(from)}: model "${visible(value)}" ${unknownWhy(value, all)}`);
  }
  return out;
}

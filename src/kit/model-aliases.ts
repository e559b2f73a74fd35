/**
 * Model aliases (llm's `aliases`): short names for model ids, kept in aliases.json in the config folder.
 * A model id is `<author>/<slug>`; an alias has no slash, so it can never shadow a model id, and a
 * value with a slash is always taken as the id it is.
 */
import { isModelId, MODEL_ID_SYNTAX } from '../client/facts.js';
import { changeConfigObject, configFilePath, readConfigObject } from './config-file.js';
import { AliasError } from './errors.js';

export { AliasError };

/** 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit: never a model id. */
const ALIAS_NAME = /^[A-Za-z0-9][\w.:-]{0,63}$/;

const isText = (v: unknown): v is string => typeof v === 'string';

export const aliasesPath = (env: NodeJS.ProcessEnv = process.env): string => configFilePath(env, 'aliases.json');

/** Whether `name` may be an alias (no slash: a name with one is a model id). */
export function isAliasName(name: string): boolean {
  return ALIAS_NAME.test(name);
}

/** The aliases, by name. */
export function readAliases(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return readConfigObject(aliasesPath(env), isText);
}

/** Sets (or replaces) an alias; returns the model it named before, if any. */
export function setAlias(name: string, model: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!isAliasName(name)) {
    const why = name.includes('/') ? 'has a slash, as a model id has: an alias never shadows a model id' : 'use 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit';
    throw new AliasError('invalid_name', name, `alias "${name}": ${why}`);
  }
  if (!isModelId(model)) throw new AliasError('invalid_model', name, `alias ${name}: "${model}" does not look like a model id (${MODEL_ID_SYNTAX})`);
  return changeConfigObject(aliasesPath(env), isText, (aliases) => {
    const before = aliases[name];
    aliases[name] = model;
    return before;
  });
}

/** Removes an alias; an unknown one is an AliasError (`not_found`). */
export function removeAlias(name: string, env: NodeJS.ProcessEnv = process.env): void {
  changeConfigObject(aliasesPath(env), isText, (aliases) => {
    if (!(name in aliases)) throw new AliasError('not_found', name, `no alias "${name}"`);
    delete aliases[name];
  });
}

/**
 * The model id a value names: a model id as it is, an alias's model, else undefined. The file is read
 * only for a value that is not a model id.
 */
export function resolveModel(value: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (isModelId(value)) return value;
  if (!isAliasName(value)) return undefined;
  return aliasedModel(readAliases(env), value, env);
}

/**
 * The model of alias `name` among `aliases` (as readAliases gave them), undefined for no such alias. One
 * written by hand to name no model id (another alias, a typo) is an AliasError (`invalid_model`), never sent.
 */
export function aliasedModel(aliases: Readonly<Record<string, string>>, name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!Object.hasOwn(aliases, name)) return undefined;
  const model = aliases[name]!;
  if (!isModelId(model)) throw new AliasError('invalid_model', name, `alias ${name} in ${aliasesPath(env)} names "${model}", not a model id (${MODEL_ID_SYNTAX}): router aliases set ${name} MODEL`);
  return model;
}

/**
 * Default options of a model (llm's `models options`): `temperature 0.5` kept for `local/echo`, used when
 * that model is chosen; kept in model-options.json in the config folder, by model id, each a text as given.
 */
import { changeConfigObject, configFilePath, readConfigObject } from './config-file.js';
import { isRecord } from '../internal/shape.js';

export type ModelOptions = Record<string, string>;

const isOptions = (v: unknown): v is ModelOptions => isRecord(v) && Object.values(v).every((x) => typeof x === 'string');

export const modelOptionsPath = (env: NodeJS.ProcessEnv = process.env): string => configFilePath(env, 'model-options.json');

/** Every model's options, by model id. */
export function readModelOptions(env: NodeJS.ProcessEnv = process.env): Record<string, ModelOptions> {
  return readConfigObject(modelOptionsPath(env), isOptions);
}

/** The options kept for one model ({} when none). */
export function optionsOf(model: string, env: NodeJS.ProcessEnv = process.env): ModelOptions {
  const all = readModelOptions(env);
  return Object.hasOwn(all, model) ? all[model]! : {};
}

/** Sets one option of a model (checked by the caller: the library keeps texts); returns the value it replaced. */
export function setModelOption(model: string, key: string, value: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return changeConfigObject(modelOptionsPath(env), isOptions, (all) => {
    const before = all[model]?.[key];
    all[model] = { ...all[model], [key]: value };
    return before;
  });
}

/** Clears one option of a model, or all of them; returns whether there was anything to clear. */
export function clearModelOptions(model: string, key?: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return changeConfigObject(modelOptionsPath(env), isOptions, (all) => {
    const own = all[model];
    if (!own || (key !== undefined && !Object.hasOwn(own, key))) return false;
    if (key === undefined) delete all[model];
    else {
      const { [key]: _, ...rest } = own;
      if (Object.keys(rest).length) all[model] = rest;
      else delete all[model];
    }
    return true;
  });
}

/**
 * A model's default options (src/kit/model-options.ts) as flags of chat and responses: each key a
 * generation flag, each value through that flag's parser (as a role's settings are, ./roles.ts), set
 * where neither the command line nor a role gave one: flags > role > the model's options.
 */
import type { Command } from '../commander.js';
import { usage } from '../exit-codes.js';
import { optionsOf } from '../../kit/model-options.js';
import { applyRole } from './roles.js';

/** The options a model may keep: what the model is asked to do, not what router does with the answer. */
export const MODEL_OPTION_KEYS = ['temperature', 'top-p', 'max-tokens', 'max-output-tokens', 'top-k', 'min-p', 'top-a', 'frequency-penalty', 'presence-penalty', 'repetition-penalty', 'seed', 'stop', 'reasoning-effort', 'reasoning-summary', 'verbosity', 'service-tier'] as const;

/** The key as kept (kebab case: `top_p` and `topP` are `top-p`); an unknown one is a usage error naming those there are. */
export function checkOptionKey(key: string): string {
  const kebab = key.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (!(MODEL_OPTION_KEYS as readonly string[]).includes(kebab)) throw usage(`"${key}" is not an option a model keeps; the options: ${MODEL_OPTION_KEYS.join(', ')}`);
  return kebab;
}

/** Checks a value as `cmd` (chat or responses, the one whose flag it is) would take it; the error names the option. */
export function checkOptionValue(cmds: Command[], key: string, value: string): void {
  const cmd = cmds.find((c) => c.options.some((o) => o.long === `--${key}`))!;
  asOptions(() => applyRole({ name: key, path: 'the value', settings: { [key]: value }, system: '' }, cmd, {}), 'role file the value: ', '');
}

/** Runs `apply`; a role's error reads as the options' (`prefix` of its message replaced by `by`). */
function asOptions<T>(apply: () => T, prefix: string, by: string): T {
  try {
    return apply();
  } catch (err) {
    if (err instanceof Error && err.message.startsWith(prefix)) err.message = by + err.message.slice(prefix.length);
    throw err;
  }
}

/** The model's options set on `opts` where the command line and the role left them unset; returns the keys set. */
export function applyModelOptions(cmd: Command, opts: Record<string, unknown>, model: string | undefined, env: NodeJS.ProcessEnv): string[] {
  const kept = model ? optionsOf(model, env) : {};
  if (!Object.keys(kept).length) return [];
  const given: Record<string, unknown> = {};
  const path = `model-options.json`;
  asOptions(() => applyRole({ name: model!, path, settings: kept, system: '' }, cmd, given), `role file ${path}: `, `the options of ${model} (router models options show ${model}): `);
  const set = Object.keys(given).filter((attr) => opts[attr] === undefined && given[attr] !== undefined);
  for (const attr of set) opts[attr] = given[attr];
  return set;
}

/**
 * chat -i's switch of model (/model, /role): the options `from` set for the model before (those still as
 * set) go, and `model`'s are set where nothing else gave one; returns those set, by attribute, for the next switch.
 */
export function switchModelOptions(cmd: Command, opts: Record<string, unknown>, from: Readonly<Record<string, unknown>>, model: string | undefined, env: NodeJS.ProcessEnv): Record<string, unknown> {
  for (const [attr, value] of Object.entries(from)) if (opts[attr] === value) delete opts[attr];
  return Object.fromEntries(applyModelOptions(cmd, opts, model, env).map((attr) => [attr, opts[attr]]));
}

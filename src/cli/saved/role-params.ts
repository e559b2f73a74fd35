/**
 * A role's placeholders (llm's template parameters, src/kit/placeholders.ts): the `$name`s of its system
 * prompt and of its `prompt` text filled from --param NAME VALUE, else the role's `defaults`; `$input`
 * is the prompt given. A missing value is one error naming each (exit 2 in cli/kit-words.ts), before anything is sent.
 */
import type { Command } from '../commander.js';
import { fillPrompt, placeholderNames } from '../../kit/placeholders.js';
import { usage } from '../exit-codes.js';
import type { IO } from '../io/io.js';
import { roleTexts, type Role } from './roles.js';

/**
 * The prompt to send (the role's `prompt` text filled, else `input` as given), the role's system text in
 * the command's option (chat's `system`, responses' `instructions`) filled unless the command line gave
 * its own. `input` undefined: there is no prompt text (chat -i, responses --input).
 */
export function fillRole(cmd: Command, opts: Record<string, unknown>, role: Role | undefined, input: string | undefined, io: IO): string | undefined {
  const params = (opts.param ?? {}) as Record<string, string>;
  if (!role) {
    if (Object.keys(params).length) throw usage(`--param gives a role's $NAME its value: give --role NAME (router roles list)`);
    return input;
  }
  const field = cmd.options.some((o) => o.long === '--system') ? 'system' : 'instructions';
  const system = cmd.getOptionValueSource(field) !== 'cli' && typeof opts[field] === 'string' ? (opts[field] as string) : undefined;
  const { prompt, defaults } = roleTexts(role);
  // chat -i (no input): the prompt text is filled for each message (rolePrompt); its other placeholders are checked now.
  const filled = fillPrompt({ system, prompt }, input ?? (prompt === undefined ? undefined : ''), params, { defaults, of: `role ${role.name}` });
  const used = new Set(placeholderNames(system, prompt));
  const unused = Object.keys(params).filter((n) => !used.has(n));
  if (prompt !== undefined && input?.trim() && !used.has('input')) io.note(`warning: role ${role.name} has no $input: the prompt given is not sent (its prompt text is)`);
  if (unused.length) io.note(`warning: role ${role.name} has no ${unused.map((n) => `$${n}`).join(', ')}: --param ${unused.join(', ')} left unused`);
  if (filled.system !== undefined) opts[field] = filled.system;
  return input === undefined ? undefined : filled.prompt;
}

/**
 * A role's `prompt` text as chat -i sends each message: filled with the message as `$input` and `params`
 * over its defaults (checked when the role was taken). undefined for a role without one: the message is sent as typed.
 */
export function rolePrompt(role: Role | undefined, params: Readonly<Record<string, string>>): ((message: string) => string) | undefined {
  const { prompt, defaults } = role ? roleTexts(role) : { prompt: undefined, defaults: {} };
  if (!role || prompt === undefined) return undefined;
  return (message) => fillPrompt({ prompt }, message, params, { defaults, of: `role ${role.name}` }).prompt!;
}

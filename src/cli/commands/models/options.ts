/** `router models options list|show|set|clear`: a model's default options (llm's `models options`), used when it is chosen. */
import { defineCommand, defineGroup } from '../../define.js';
import { CliError, EXIT } from '../../exit-codes.js';
import { modelOrAlias } from '../../flags/options.js';
import { visible } from '../../../internal/visible.js';
import { described } from '../../io/described.js';
import { clearModelOptions, optionsOf, readModelOptions, setModelOption } from '../../../kit/model-options.js';
import type { Command } from '../../commander.js';

const MODEL = { name: '<model>', help: 'the model id (or an alias: router aliases list)', parse: modelOrAlias, complete: 'models' } as const;

/**
 * A model given as an alias is its model's id: options belong to the model, so set, show and clear through
 * an alias act on the model it names now (and stay with that model when the alias is later pointed elsewhere).
 * `said` names both. An unknown alias is refused as a malformed id is.
 */
async function modelIdOf(env: NodeJS.ProcessEnv, value: string): Promise<{ id: string; said: string }> {
  if (value.includes('/')) return { id: value, said: value };
  const { resolveModel } = await import('../../../kit/model-aliases.js');
  const id = resolveModel(value, env);
  if (!id) throw new CliError(`"${visible(value)}" is neither a model id (<author>/<slug>) nor an alias (router aliases list)`, EXIT.USAGE);
  return { id, said: `${id} (alias ${value})` };
}


const list = defineCommand({
  name: 'list',
  jsonFields: ['model', 'option', 'value'],
  summary: 'every model\'s options',
  description: 'every model\'s options; piped, one tab-separated line each: model, option, value',
  flags: { json: { flags: '--json', help: 'print them as JSON: [{ model, option, value }]' } },
  examples: ['router models options list'],
  run: async ({ io, opts, env }) => {
    const all = readModelOptions(env);
    if (opts.json) return io.json(Object.entries(all).flatMap(([model, o]) => Object.entries(o).map(([option, value]) => ({ model, option, value }))));
    if (!Object.keys(all).length) return io.info('no model options yet: router models options set MODEL OPTION VALUE');
    const { table } = await import('../../io/table.js');
    io.out(table(io, ['model', 'option', 'value'], Object.entries(all).flatMap(([m, o]) => Object.entries(o).map(([k, v]) => [m, k, v]))));
  },
});

const show = defineCommand({
  name: 'show',
  jsonFields: ['option', 'value'],
  summary: 'one model\'s options',
  description: 'one model\'s options; piped, one tab-separated line each: option, value',
  args: [MODEL],
  flags: { json: { flags: '--json', help: 'print them as JSON: [{ option, value }]' } },
  examples: ['router models options set local/echo temperature 0.5', 'router models options show local/echo'],
  run: async ({ io, opts, env }, model) => {
    const { id, said } = await modelIdOf(env, model);
    const options = optionsOf(id, env);
    if (opts.json) return io.json(Object.entries(options).map(([option, value]) => ({ option, value })));
    if (!Object.keys(options).length) return io.info(`no options kept for ${said}`);
    if (id !== model) io.info(`the options of ${said}`);
    io.out(described(io, Object.entries(options)));
  },
});

const set = defineCommand({
  name: 'set',
  summary: 'keep an option of a model for chat and responses',
  description: 'keep an option of a model, used by chat and responses when it is chosen (a flag or a role goes over it)',
  args: [MODEL, { name: '<option>', help: 'a generation flag without its dashes: temperature, max-tokens, top-p, seed, …' }, { name: '<value>', help: 'its value, as the flag takes it' }],
  examples: ['router models options set local/echo temperature 0.5', 'router models options set local/echo max-tokens 200'],
  run: async (ctx, model, option, value) => {
    const { io, env } = ctx;
    const { checkOptionKey, checkOptionValue } = await import('../../saved/model-options.js');
    const key = checkOptionKey(option);
    checkOptionValue(await flagTables(), key, value);
    const { id, said } = await modelIdOf(env, model);
    const before = setModelOption(id, key, value, env);
    if (before !== undefined && before !== value) io.note(`note: ${key} of ${said} was ${before}; now ${value}`);
    else io.info(`${said}: ${key} ${value}`);
    // As aliases set and config set model say it: from the model list `router models` keeps, when fresh; nothing sent.
    const settings = await ctx.settings().catch(() => undefined);
    const { DEFAULT_API_ROOT } = await import('../../../client/core.js');
    const note = settings && (await (await import('../../service/model-hint.js')).unlistedNote(env, id, settings.apiRoot ?? DEFAULT_API_ROOT));
    if (note) io.note(note);
  },
});

const clear = defineCommand({
  name: 'clear',
  summary: 'clear one option of a model, or all of them',
  args: [MODEL, { name: '[option]', help: 'the option (all of them when left out)' }],
  examples: ['router models options set local/echo seed 7', 'router models options clear local/echo seed'],
  run: async ({ io, env }, model, option) => {
    const { id, said } = await modelIdOf(env, model);
    const key = option === undefined ? undefined : (await import('../../saved/model-options.js')).checkOptionKey(option);
    if (!clearModelOptions(id, key, env)) throw new CliError(`no ${key === undefined ? 'options' : `option ${key}`} kept for ${said}`, EXIT.NOT_FOUND);
    io.info(`cleared ${key ?? 'the options'} of ${said}`);
  },
});

/** chat's and responses' flags, where an option's value is checked. */
async function flagTables(): Promise<Command[]> {
  const { Command } = await import('../../commander.js');
  const { addFlags } = await import('../../flags/flags.js');
  const { CHAT_FLAGS } = await import('../chat/flags.js');
  const { RESPONSES_FLAGS } = await import('../responses/flags.js');
  return [addFlags(new Command('chat'), CHAT_FLAGS), addFlags(new Command('responses'), RESPONSES_FLAGS)];
}

export const options = defineGroup({
  name: 'options',
  summary: 'default options of a model (temperature, …)',
  description: 'Default options of a model (llm\'s models options), kept in model-options.json in the config folder and used by chat and responses when that model is chosen: flags given go over them, and a role\'s settings too.',
  commands: [list, show, set, clear],
});

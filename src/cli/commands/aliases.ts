/** `router aliases list|set|remove|path`: short names for model ids (llm's aliases), taken wherever a model id is. */
import { defineCommand, defineGroup } from '../define.js';
import { CliError, EXIT } from '../exit-codes.js';
import { cliErrorOf } from '../kit-words.js';
import { modelId } from '../flags/options.js';
import { aliasesPath, readAliases, removeAlias, setAlias } from '../../kit/model-aliases.js';

const ALIAS_NAME = { name: '<name>', help: 'the alias: letters, digits, ".", "_", ":" or "-" (no slash: an alias never shadows a model id)' } as const;

/** A kit error in the CLI's words; `not_found` is exit 5, as `roles delete` of an unknown role. */
function said(err: unknown): unknown {
  return cliErrorOf(err) ?? err;
}

const list = defineCommand({
  name: 'list',
  jsonFields: ['name', 'model'],
  summary: 'list the aliases',
  description: 'list the aliases; piped, one tab-separated line each: alias, model id',
  flags: { json: { flags: '--json', help: 'print them as JSON: [{ name, model }]' } },
  examples: ['router aliases list', 'router aliases list --json'],
  run: async ({ io, opts, env }) => {
    const all = Object.entries(readAliases(env)).sort(([a], [b]) => a.localeCompare(b)).map(([name, model]) => ({ name, model }));
    if (opts.json) return io.json(all);
    if (!all.length) return io.info('no aliases yet: router aliases set NAME MODEL');
    const { table } = await import('../io/table.js');
    io.out(table(io, ['alias', 'model'], all.map((a) => [a.name, a.model])));
  },
});

const set = defineCommand({
  name: 'set',
  summary: 'name a model: the alias works wherever an id does',
  description: 'name a model: the alias then works wherever a model id is taken (--model, a role, config set model)',
  args: [ALIAS_NAME, { name: '<model>', help: 'the model id, <author>/<slug>', parse: modelId, complete: 'model-ids' }],
  examples: ['router aliases set fast local/echo', 'router chat -m fast "hello"'],
  run: async (ctx, name, model) => {
    const { io, env } = ctx;
    const before = setAlias(name, model, env);
    if (before !== undefined && before !== model) io.note(`note: alias ${name} was ${before}; now ${model}`);
    else io.info(`alias ${name}: ${model}`);
    // Said from the model list `router models` keeps, when fresh: a Tab's worth of cost, nothing sent.
    const settings = await ctx.settings().catch(() => undefined);
    const { DEFAULT_API_ROOT } = await import('../../client/core.js');
    const note = settings && (await (await import('../service/model-hint.js')).unlistedNote(env, model, settings.apiRoot ?? DEFAULT_API_ROOT));
    if (note) io.note(note);
  },
});

const remove = defineCommand({
  name: 'remove',
  summary: 'remove an alias',
  args: [{ ...ALIAS_NAME, help: 'the alias', complete: 'aliases' }],
  examples: ['router aliases set scratch local/echo', 'router aliases remove scratch'],
  run: async ({ io, env }, name) => {
    try {
      removeAlias(name, env);
    } catch (err) {
      const e = said(err);
      if (e instanceof CliError && e.exitCode === EXIT.NOT_FOUND) {
        const names = Object.keys(readAliases(env));
        e.message = `${e.message}${names.length ? `; the aliases are: ${names.join(', ')}` : ': there are no aliases'}`;
      }
      throw e;
    }
    io.info(`removed alias ${name}`);
  },
});

const path = defineCommand({
  name: 'path',
  summary: 'print the file the aliases are kept in',
  examples: ['router aliases path'],
  run: async ({ io, env }) => void io.out(`${aliasesPath(env)}\n`),
});

export const aliases = defineGroup({
  name: 'aliases',
  summary: 'short names for model ids',
  description: 'Aliases: short names for model ids (llm\'s aliases), kept in aliases.json in the config folder. An alias works wherever a model id is taken: --model of chat, responses, embed, speak and batch, a role\'s model, and the model, embed_model and speech_model settings. An alias has no slash, so it never shadows a model id.',
  commands: [list, set, remove, path],
  examples: ['router aliases set quick local/echo', 'router chat -m quick "hello"', 'router aliases list'],
});

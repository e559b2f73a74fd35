/** `router models [SEARCH]` and `router models show ID`: the service's model list, kept briefly in the state folder. */
import { Option, type Command } from '../commander.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { action, type RunContext } from '../run.js';
import { renderTable } from './batch/format.js';
import type { Model } from '../../client/resources/models.js';

interface ModelsOpts {
  inputModality?: string;
  outputModality?: string;
  supports?: string[];
  sort?: 'price' | 'context' | 'name';
  refresh?: boolean;
  json?: boolean;
}

export function registerModels(program: Command): void {
  const models = program
    .command('models')
    .description('List the models the service routes to: a table on a terminal (id, name, context, $ per million prompt/completion tokens, modalities), tab-separated lines piped.')
    .argument('[search...]', 'words that the id or name must all hold (case-insensitive)')
    .option('--input-modality <m>', 'only models that take this input (text, image, audio, file, …)')
    .option('--output-modality <m>', 'only models that produce this output (text, image, audio, embeddings, …)')
    .option('--supports <param>', 'only models that support this parameter (tools, response_format, …; repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .addOption(new Option('--sort <key>', 'order by').choices(['price', 'context', 'name']))
    .option('--refresh', 'fetch the list again rather than use the copy kept for five minutes')
    .option('--json', 'print the models as a JSON array')
    .addHelpText(
      'after',
      `
Piped, one tab-separated line per model: id, name, context length, prompt and completion price in
USD per million tokens, input->output modalities. The list is kept five minutes in
$XDG_STATE_HOME/router/models/ (it also prices --max-cost and --dry-run).

Examples:
  $ router models
  $ router models lorem
  $ router models --output-modality text --sort price
  $ router models --json id,pricing --jq '.[].id'`,
    )
    .action(action<ModelsOpts, [string[]]>(runModels));
  models
    .command('show')
    .description('One model, whole, as the service describes it (JSON).')
    .argument('<id>', 'the model id, <author>/<slug>')
    .option('--refresh', 'fetch the list again rather than use the copy kept for five minutes')
    .addHelpText('after', '\nExamples:\n  $ router models show local/echo')
    .action(action<{ refresh?: boolean }, [string]>(runShow));
}

async function fetchModels(ctx: RunContext<{ refresh?: boolean }>): Promise<Model[]> {
  const { client, settings } = await ctx.connect();
  try {
    const { modelCatalog } = await import('../model-catalog.js');
    const { DEFAULT_API_ROOT } = await import('../../client/core.js');
    return await modelCatalog(client, { env: ctx.env, apiRoot: settings.apiRoot ?? DEFAULT_API_ROOT, refresh: ctx.opts.refresh, signal: ctx.signal });
  } finally {
    await client.close();
  }
}

async function runModels(ctx: RunContext<ModelsOpts>, search: string[]): Promise<void> {
  const { io, opts } = ctx;
  const { filterModels, fitColumns, modelRow, sortModels, unknownFilter } = await import('./models-filter.js');
  const all = await fetchModels(ctx);
  const unknown = unknownFilter(all, opts);
  // A value close to one the list has is a typo, refused; another (video, when no model takes it) just matches nothing.
  if (unknown?.typo) throw usage(unknown.line);
  const found = sortModels(filterModels(all, search, opts), opts.sort);
  if (opts.json) return io.json(found);
  const rows = found.map(modelRow);
  if (!io.stdoutTTY) return void io.out(rows.map((r) => `${r.join('\t')}\n`).join(''));
  if (rows.length === 0) return io.info(unknown ? `no models match: ${unknown.line}` : 'no models match');
  const chalk = io.color ? (await import('chalk')).default : undefined;
  const fitted = fitColumns(rows, io.columns!);
  io.out(renderTable(fitted.head, fitted.rows, io.columns!, chalk ? (s) => chalk.bold(s) : undefined));
}

async function runShow(ctx: RunContext<{ refresh?: boolean }>, id: string): Promise<void> {
  const models = await fetchModels(ctx);
  const model = models.find((m) => m.id === id);
  if (!model) {
    const { nearestModel } = await import('../model-hint.js');
    const near = nearestModel(id, models.map((m) => m.id));
    throw new CliError(`no model ${id} in the list${near ? ` (did you mean ${near}?)` : ''}: see router models`, EXIT.NOT_FOUND);
  }
  ctx.io.json(model);
}

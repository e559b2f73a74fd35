/** `router models [SEARCH]` and `router models show ID`: the service's model list, kept briefly in the state folder. */
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import { defineCommand } from '../../define.js';
import type { FlagTable, FlagValues } from '../../flags/flags.js';
import { table } from '../../io/table.js';
import { FILTER_FLAGS, filterModels, fitColumns, modelRow, sortModels, unknownFilter } from './filter.js';
import type { Model } from '../../../client/resources/models.js';
import { options } from './options.js';
import { tabLine } from '../../io/described.js';

/** The top-level fields of the JSON printed (for lists: of each item), for `--json FIELDS`. */
const MODEL = ['id', 'canonical_slug', 'hugging_face_id', 'name', 'created', 'description', 'context_length', 'architecture', 'pricing', 'top_provider', 'per_request_limits', 'supported_parameters', 'default_parameters', 'supported_voices', 'reasoning', 'links', 'expiration_date', 'knowledge_cutoff'];

const REFRESH_FLAG = { flags: '--refresh', help: 'fetch the list again rather than use the copy kept for five minutes' } as const;

const show = defineCommand({
  name: 'show',
  jsonFields: MODEL,
  summary: 'One model, whole, as the service describes it (JSON).',
  args: [{ name: '<id>', help: 'the model id, <author>/<slug>' }],
  flags: { refresh: REFRESH_FLAG, json: { flags: '--json', help: 'print the model as JSON (the default; with FIELDS, only those)' } },
  examples: ['router models show local/echo', 'router models show local/echo --jq .pricing'],
  run: runShow,
});

const FLAGS = {
  ...FILTER_FLAGS,
  sort: { flags: '--sort <key>', help: 'order by', choices: ['price', 'context', 'name'] },
  refresh: REFRESH_FLAG,
  json: { flags: '--json', help: 'print the models as a JSON array' },
} as const satisfies FlagTable;

export const models = defineCommand({
  name: 'models',
  jsonFields: MODEL,
  summary: 'the models the service routes to, with their prices',
  description: 'List the models the service routes to: a table on a terminal (id, name, context, $ per million prompt/completion tokens, modalities), tab-separated lines piped.',
  args: [{ name: '[search...]', help: 'words that the id or name must all hold (case-insensitive)' }],
  flags: FLAGS,
  notes: `Piped, one tab-separated line per model: id, name, context length, prompt and completion price in USD per million tokens ("varies" for a router's, which the list gives as -1), input->output modalities. The list is kept five minutes in $XDG_STATE_HOME/router/models/ (it also prices --max-cost and --dry-run). Words or filters that match no model exit 1 (as grep), saying so on stderr.`,
  examples: ['router models', 'router models lorem', 'router models --output-modality text --sort price', "router models --json id,pricing --jq '.[].id'"],
  commands: [show, options],
  run: runModels,
});

async function fetchModels(ctx: RunContext<{ refresh?: boolean }>): Promise<Model[]> {
  const { client, settings } = await ctx.connect();
  try {
    const { modelCatalog } = await import('../../service/model-catalog.js');
    const { DEFAULT_API_ROOT } = await import('../../../client/core.js');
    return await modelCatalog(client, { env: ctx.env, apiRoot: settings.apiRoot ?? DEFAULT_API_ROOT, refresh: ctx.opts.refresh, signal: ctx.signal });
  } finally {
    await client.close();
  }
}

async function runModels(ctx: RunContext<FlagValues<typeof FLAGS>>, search: string[]): Promise<void> {
  const { io, opts } = ctx;
  const all = await fetchModels(ctx);
  const unknown = unknownFilter(all, opts);
  // A value close to one the list has is a typo, refused; another (video, when no model takes it) just matches nothing.
  if (unknown?.typo) throw usage(unknown.line);
  const found = sortModels(filterModels(all, search, opts), opts.sort);
  // Nothing matched what was asked: said on stderr however the list is printed, exit 1 (as grep).
  const none = !found.length && (search.length || unknown || opts.inputModality || opts.outputModality || opts.supports?.length) ? await noMatch(all, search, opts, unknown?.line) : undefined;
  if (opts.json) io.json(found);
  else if (!io.stdoutTTY) io.out(found.map((m) => tabLine(modelRow(m, ''))).join(''));
  else if (found.length) {
    const fitted = fitColumns(found.map((m) => modelRow(m, '-')), io.columns!);
    io.out(table(io, fitted.head, fitted.rows, { cutLines: true }));
  }
  if (none) throw none;
}

/** "no model matches …": the words and filters asked, or the filter no model has; a near model's id when a word is a typo of one. */
async function noMatch(all: Model[], search: string[], opts: FlagValues<typeof FLAGS>, unknownFilter: string | undefined): Promise<CliError> {
  if (unknownFilter) return new CliError(unknownFilter, EXIT.FAILURE);
  const { closest } = await import('../../../internal/did-you-mean.js');
  const names = all.flatMap((m) => [m.id, m.id.split('/').pop()!]);
  // A typo is a word that alone matches no model ("zzz lorem": lorem matches; its guess would be itself).
  const near = search.filter((w) => !filterModels(all, [w], {}).length).map((w) => closest(w, names)).find((n) => n !== undefined);
  const model = near && all.find((m) => m.id === near || m.id.endsWith(`/${near}`));
  const asked = [search.map((w) => `"${w}"`).join(' and '), opts.inputModality && `--input-modality ${opts.inputModality}`, opts.outputModality && `--output-modality ${opts.outputModality}`, ...(opts.supports ?? []).map((p) => `--supports ${p}`)];
  // llm's `models default`: here the default model is a setting.
  // llm's and gh's `models list`: here the words search, and no word lists every model.
  const hint = model ? ` (did you mean ${model.id}?)` : search.includes('default') ? ' (the default model is a setting: router config get model; router config set model ID)' : search.includes('list') ? ' (router models with no word lists every model; its words search them)' : '';
  return new CliError(`no model matches ${asked.filter(Boolean).join(' with ')}${hint}`, EXIT.FAILURE);
}

async function runShow(ctx: RunContext<{ refresh?: boolean }>, id: string): Promise<void> {
  const models = await fetchModels(ctx);
  const model = models.find((m) => m.id === id);
  if (!model) {
    const { nearestModel } = await import('../../service/model-hint.js');
    const near = nearestModel(id, models.map((m) => m.id));
    throw new CliError(`no model ${id} in the list${near ? ` (did you mean ${near}?)` : ''}: see router models`, EXIT.NOT_FOUND);
  }
  ctx.io.json(model);
}

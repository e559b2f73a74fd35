/**
 * `router embed-multi NAME FILE|--files DIR GLOB`: many items into a collection (llm's embed-multi), in
 * batches, a few requests at a time; items kept already with the same text are not sent again, so a
 * run cut short is finished by running it again.
 */
import { defineCommand } from '../../define.js';
import { integerIn, nonEmpty } from '../../flags/options.js';
import { usage } from '../../exit-codes.js';
import { readTextFile } from '../../io/input.js';
import { counted } from '../../../internal/counted.js';
import { DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, planEmbeds, type EmbedItem } from '../../../kit/collections/embed.js';
import { formatOf, itemsFromFiles, itemsFromText, type ItemsFormat } from '../../../kit/collections/items.js';
import { collectionsOf, modelFor, sendPlan, SEND_FLAGS } from './send.js';

const FORMATS = ['jsonl', 'json', 'csv', 'tsv'] as const;

export const embedMulti = defineCommand({
  name: 'embed-multi',
  logsUsage: true,
  summary: 'embed a file of items or a folder into a collection',
  description:
    'Embed items into a collection. FILE holds them: JSONL or a JSON array of {"id", "content", "metadata"} (without "content", the other fields joined), or CSV/TSV with a header row (the first column the id, the others the content). With --files DIR, the second argument is a glob (e.g. \'**/*.md\') and each matching file is an item, its id its path under DIR.',
  args: [
    { name: '<name>', help: 'the collection (made on first use; its model fixed then)', complete: 'collections' },
    { name: '[file]', help: 'the items ("-": stdin, see --format); with --files, the glob' },
  ],
  flags: {
    files: { flags: '--files <dir>', help: 'embed the files under DIR that match the glob given as the second argument' },
    format: { flags: '--format <format>', help: 'the format of FILE (default: by its name; stdin: jsonl)', choices: FORMATS },
    prefix: { flags: '--prefix <text>', help: 'put this before every id', parse: nonEmpty },
    store: { flags: '--store', help: 'keep each text beside its vector (router similar prints it)' },
    batchSize: { flags: '--batch-size <n>', help: 'texts per request', parse: integerIn(1, 2048), default: DEFAULT_BATCH_SIZE },
    concurrency: { flags: '--concurrency <n>', help: 'requests under way at once', parse: integerIn(1, 16), default: DEFAULT_CONCURRENCY },
    ...SEND_FLAGS,
  },
  notes: 'Each batch is kept as soon as it is answered. Items whose id is kept with the same text are not sent again: run the same command again to finish a run that was cut short. Exit 4 when --max-cost or a budget refuses the whole run (nothing is sent).',
  examples: [
    'router embed-multi items items.jsonl --model local/embed --store',
    'router embed-multi items items.jsonl    # again: nothing is sent',
    'router embed-multi notes --files notes \'**/*.md\' --model local/embed \\\n--prefix notes/',
    'cat items.jsonl | router embed-multi items - --format jsonl',
  ],
  run: async (ctx, name, source) => {
    const { io, opts } = ctx;
    const collection = (await collectionsOf(ctx)).open(name);
    let items: EmbedItem[];
    if (opts.files !== undefined) {
      if (source === undefined) throw usage('--files DIR needs a glob as the second argument, e.g. router embed-multi NAME --files docs \'**/*.md\'');
      if (opts.format) throw usage('--format goes with FILE, not --files');
      let found: ReturnType<typeof itemsFromFiles>;
      try {
        found = itemsFromFiles(opts.files, source, opts.prefix);
      } catch (err) {
        throw usage(`--files ${opts.files}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message}`);
      }
      for (const s of found.skipped) io.note(`note: ${s.path} skipped: ${s.why}`);
      items = found.items;
      if (!items.length) throw usage(`no file under ${opts.files} matches ${source}${found.skipped.length ? ' and holds text' : ''}: nothing to embed`);
    } else {
      if (source === undefined) throw usage('give the items: a FILE (JSONL, JSON, CSV or TSV; "-" for stdin), or --files DIR GLOB');
      const format: ItemsFormat | undefined = opts.format ?? (source === '-' ? 'jsonl' : formatOf(source));
      if (!format) throw usage(`cannot tell the format of ${source} by its name: give --format (${FORMATS.join(', ')})`);
      const text = await readTextFile('FILE', source, io);
      items = itemsFromText(text, format, source === '-' ? 'stdin' : source, collection.name, (n) => io.note(`note: ${n}`)).map((i) => (opts.prefix ? { ...i, id: opts.prefix + i.id } : i));
      if (!items.length) throw usage(`${source === '-' ? 'stdin' : source} holds no items: nothing to embed`);
    }
    const plan = planEmbeds(collection, items, { model: await modelFor(ctx, collection), dimensions: opts.dimensions, store: !!opts.store });
    const sent = await sendPlan(ctx, collection, plan, { batchSize: opts.batchSize, concurrency: opts.concurrency });
    if (sent === undefined) return;
    const kept = plan.unchanged + plan.relabel.length;
    // A fact, said piped too (one line, at the end): how many of the items were sent and how many were kept already.
    if (!io.quiet) io.note(sent === 0 && kept ? `nothing sent to embed into ${collection.name}: ${counted(kept, 'item')} kept already with the same text` : `${counted(sent, 'item')} embedded into ${collection.name}${kept ? `; ${counted(kept, 'item')} kept already with the same text, not sent` : ''}`);
  },
});

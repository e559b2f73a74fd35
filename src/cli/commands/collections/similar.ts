/** `router similar NAME TEXT|--id ID`: the entries of a collection nearest a text or an entry, one JSON line each (llm's similar). */
import { defineCommand } from '../../define.js';
import { integerIn, nonEmpty } from '../../flags/options.js';
import { usage } from '../../exit-codes.js';
import { textFromArgs } from '../../io/input.js';
import { CollectionError } from '../../../kit/errors.js';
import { modelMismatch } from '../../../kit/collections/store.js';
import { similarTo, similarToId, type SimilarHit } from '../../../kit/collections/similar.js';
import { collectionsOf, queryVector, SEND_FLAGS } from './send.js';

const { dimensions: _dimensions, ...FLAGS_TO_SEND } = SEND_FLAGS;

export const similar = defineCommand({
  name: 'similar',
  logsUsage: true,
  jsonFields: ['id', 'score', 'content', 'metadata'],
  summary: "a collection's entries most like a text or an entry",
  description: 'the entries of a collection most like a text (embedded with its model) or a kept entry, by cosine similarity',
  args: [
    { name: '<name>', help: 'the collection', complete: 'collections' },
    { name: '[text...]', help: 'the text to compare with ("-" or nothing: stdin)' },
  ],
  flags: {
    id: { flags: '--id <id>', help: 'compare with this kept entry instead (nothing is sent; the entry itself is left out)', parse: nonEmpty },
    number: { flags: '-n, --number <n>', help: 'how many to print', parse: integerIn(1), default: 10 },
    prefix: { flags: '--prefix <text>', help: 'only entries whose id starts with this', parse: nonEmpty },
    plain: { flags: '--plain', help: 'print "id (score)" lines instead of JSON' },
    ...FLAGS_TO_SEND,
  },
  notes: 'One JSON line per entry, best first: {"id", "score", "content", "metadata"} (content and metadata null unless kept). A text is embedded with the collection\'s model, through --max-cost and the budgets as any call.',
  examples: [
    'router embed-multi items items.jsonl --model local/embed --store',
    'router similar items "the first item"',
    'router similar items --id one -n 3 --plain',
  ],
  run: async (ctx, name, words) => {
    const { io, opts } = ctx;
    const collection = (await collectionsOf(ctx)).open(name);
    const meta = collection.meta();
    if (!meta) throw new CollectionError('not_found', name, `no collection ${name}`);
    if (opts.model && opts.model !== meta.model) throw modelMismatch(name, meta.model, opts.model);
    let hits: SimilarHit[];
    if (opts.id !== undefined) {
      if (words.length) throw usage('give a text or --id, not both');
      hits = similarToId(collection, opts.id, { number: opts.number, prefix: opts.prefix });
    } else {
      const text = await textFromArgs(words, io, { what: 'text', example: `echo text | router similar ${name}` });
      if (!text.trim()) throw usage(`give a text to compare with, or --id ID: router similar ${name} "some text"`);
      const vector = await queryVector(ctx, meta, text);
      if (!vector) return;
      hits = similarTo(collection, vector, { number: opts.number, prefix: opts.prefix });
    }
    // Nothing to print is said, not left to an empty output.
    const none = opts.prefix !== undefined ? `no entry of ${name} has an id starting with ${opts.prefix}` : `${name} has no entry to compare with`;
    if (!hits.length) io.note(`note: ${none}${opts.id !== undefined ? ` besides ${opts.id} (itself is left out)` : ''}`);
    if (opts.plain) return void io.out(hits.map((h) => `${h.id} (${h.score})\n`).join(''));
    for (const h of hits) io.jsonl(h);
  },
});

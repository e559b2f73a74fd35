/** `router embed TEXT -c NAME --id ID`: one text kept in a collection (llm's `embed COLLECTION ID`); stdout stays empty. */
import type { RunContext } from '../../run.js';
import type { FlagValues } from '../../flags/flags.js';
import { usage } from '../../exit-codes.js';
import { textFromArgs } from '../../io/input.js';
import { isRecord } from '../../../internal/shape.js';
import { planEmbeds } from '../../../kit/collections/embed.js';
import { collectionsOf, modelFor, sendPlan, SEND_FLAGS } from './send.js';

/** What of `embed`'s flags this reads (its table is embed.ts's, which loads this file). */
type EmbedOpts = FlagValues<typeof SEND_FLAGS> & { collection?: string; id?: string; metadata?: string; store?: boolean } & Partial<Record<keyof typeof NOT_WITH_COLLECTION, unknown>>;

/** Flags of `embed` that say how to print or split a response: a collection keeps the vector instead. */
const NOT_WITH_COLLECTION = { json: '--json', jsonl: '--jsonl', raw: '--raw', encodingFormat: '--encoding-format', file: '--file', inputType: '--input-type' } as const;

export async function embedOne(ctx: RunContext<EmbedOpts>, args: string[]): Promise<void> {
  const { io, opts } = ctx;
  for (const [key, flag] of Object.entries(NOT_WITH_COLLECTION)) {
    if (opts[key as keyof typeof NOT_WITH_COLLECTION] !== undefined) throw usage(`${flag} does not go with --collection${key === 'file' ? ': router embed-multi NAME FILE embeds a file of items' : ''}`);
  }
  if (ctx.cmd.getOptionValueSource('perRequest') === 'cli') throw usage('--per-request does not go with --collection');
  // llm's `embed COLLECTION ID -c TEXT` reads here as the text's words with TEXT as the collection: said so.
  if (opts.id === undefined) throw usage(`--collection needs --id ID: the entry's id in the collection${args.length === 2 ? `; llm's "embed COLLECTION ID -c TEXT" is router embed -c COLLECTION --id ID "TEXT" here` : ''}`);
  if (args.length > 1 && !args.includes('-')) throw usage(`--collection keeps one text: give it as one argument (quoted), not ${args.length}`);
  const metadata = opts.metadata === undefined ? undefined : metadataOf(opts.metadata);
  const collection = (await collectionsOf(ctx)).open(opts.collection!);
  const content = args.length === 1 && args[0] !== '-' ? args[0]! : await textFromArgs(args, io, { what: 'text', example: `echo text | router embed -c ${collection.name} --id ID` });
  if (!content.trim()) throw usage('the text is blank: there is nothing to embed in it');
  const plan = planEmbeds(collection, [{ id: opts.id, content, ...(metadata ? { metadata } : {}) }], { model: await modelFor(ctx, collection), dimensions: opts.dimensions, store: !!opts.store });
  const sent = await sendPlan(ctx, collection, plan);
  if (sent === undefined) return;
  // Said piped too: whether the text was sent (and paid for) is not seen in the (empty) stdout.
  if (!io.quiet) io.note(sent ? `kept ${opts.id} in collection ${collection.name}` : plan.relabel.length ? `kept ${opts.id} in collection ${collection.name} (the same text: nothing sent)` : `${opts.id} is in collection ${collection.name} already, with the same text: nothing sent`);
}

/** --metadata's value: a JSON object. */
export function metadataOf(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw usage(`--metadata is not valid JSON (${(err as Error).message})`);
  }
  if (!isRecord(v)) throw usage('--metadata must be a JSON object, e.g. \'{"source": "notes"}\'');
  return v;
}

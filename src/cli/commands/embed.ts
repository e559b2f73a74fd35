/** `router embed`: texts as vectors, one input per argument or per line, in as many requests as it takes. */
import { usageFields } from '../../kit/spend/ledger.js';
import { usageLine } from '../io/output.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { fallbackModelsFlag, integerIn, modelFlag, nonEmpty, OPEN_USER_FLAG, OUTPUT_FLAGS, PROVIDER_FLAGS, ROUTING_FLAGS } from '../flags/options.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { boundNote, guardSpend, FIXED_SPEND_FLAGS } from '../spend/spend-guard.js';
import { providerFrom, readTextFile, textFromArgs } from '../io/input.js';
import type { EmbeddingResponse } from '../../client/types.js';
import { roundCost } from '../../internal/round-cost.js';
import { counted } from '../../internal/counted.js';
import { blankInput } from '../../internal/blank.js';

/** Inputs per request: OpenAI's limit, and the emulator's. */
const PER_REQUEST = 2048;

const FLAGS = {
  file: { flags: '--file <file>', help: 'inputs, one per line ("-" for stdin)' },
  model: modelFlag("embedding model, <author>/<slug> (default: ROUTER_EMBED_MODEL, else the profile's embed_model)", 'embedding'),
  models: fallbackModelsFlag('embedding'),
  dimensions: { flags: '--dimensions <n>', help: 'output dimensions (>= 1)', parse: integerIn(1) },
  encodingFormat: { flags: '--encoding-format <format>', help: 'wire encoding of the vectors', choices: ['float', 'base64'] },
  raw: { flags: '--raw', help: 'with --encoding-format base64: keep the base64 strings' },
  inputType: { flags: '--input-type <type>', help: 'input-type hint, e.g. search_query or search_document', parse: nonEmpty },
  user: OPEN_USER_FLAG,
  providerOnly: PROVIDER_FLAGS.providerOnly,
  fallbacks: PROVIDER_FLAGS.fallbacks,
  routerMetadata: ROUTING_FLAGS.routerMetadata,
  json: { flags: '--json', help: 'print the embedding response (the default)' },
  usage: OUTPUT_FLAGS.usage,
  jsonl: { flags: '--jsonl', help: 'print one {"index", "input", "embedding"} per line' },
  ...FIXED_SPEND_FLAGS,
  collection: { flags: '-c, --collection <name>', help: 'keep the vector in this collection (per profile), under --id; prints nothing', complete: 'collections' },
  id: { flags: '--id <id>', help: 'with --collection: the entry\'s id (the same id and text again sends nothing)', parse: nonEmpty },
  metadata: { flags: '--metadata <json>', help: 'with --collection: a JSON object kept with the entry (router similar prints it)' },
  store: { flags: '--store', help: 'with --collection: keep the text too (router similar prints it)' },
  perRequest: { flags: '--per-request <n>', help: 'inputs per request: more are sent as several requests, answered as one', parse: integerIn(1, 100_000), default: PER_REQUEST },
} as const;

type EmbedOpts = FlagValues<typeof FLAGS>;

export const embed = defineCommand({
  name: 'embed',
  logsUsage: true,
  jsonFields: ['object', 'data', 'model', 'usage', 'id', 'index', 'input', 'embedding', 'router_metadata', 'openrouter_metadata'],
  summary: 'embed texts as vectors',
  description: 'Create embeddings: one input per argument, or one per line of --file (plain text, or JSONL of strings or {"input": …}). A lone "help" is refused, not sent: to embed the word itself, router embed -- help.',
  args: [{ name: '[texts...]', help: 'texts to embed; "-" or nothing reads stdin (one input per line)' }],
  flags: FLAGS,
  examples: [
    'router embed "first text" "second text" --model local/embed --dimensions 8',
    'router embed --file docs.txt --model local/embed --jsonl > vectors.jsonl',
    'router embed "first text" --model local/embed --dry-run',
    'router embed "my happy hound" -c phrases --id hound --model local/embed \\\n--store --metadata \'{"name": "Hound"}\'',
  ],
  run: runEmbed,
});

async function inputsFrom(opts: EmbedOpts, args: string[], io: RunContext<EmbedOpts>['io']): Promise<string[]> {
  if (opts.file !== undefined && args.length) throw usage('give the inputs either as arguments or with --file, not both');
  // "-" stands for stdin's lines as the inputs: beside other arguments it would drop them, unsaid.
  if (args.includes('-') && args.length > 1) throw usage('"-" reads the inputs from stdin, one a line: give it alone, or give the inputs as arguments');
  if (opts.file === undefined && args.length && !args.includes('-')) {
    const blank = args.findIndex((a) => !a.trim());
    if (blank !== -1) throw usage(`argument ${blank + 1} is blank: there is nothing to embed in it`);
    return args;
  }
  let text: string;
  if (opts.file !== undefined && opts.file !== '-') {
    text = await readTextFile('--file', opts.file, io);
  } else {
    text = await textFromArgs(args.includes('-') ? ['-'] : [], io, { what: 'input', example: 'echo text | router embed --model local/embed' });
  }
  const inputs: string[] = [];
  const blanks: number[] = [];
  let lastLine = 0;
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return void blanks.push(i + 1);
    lastLine = i + 1;
    if (/^\s*[{"]/.test(line)) {
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        throw usage(`line ${i + 1}: looks like JSON but is not valid`);
      }
      const s = typeof v === 'string' ? v : (v as { input?: unknown; text?: unknown })?.input ?? (v as { text?: unknown })?.text;
      if (typeof s !== 'string') throw usage(`line ${i + 1}: a JSON line must be a string or an object with "input"`);
      if (!s.trim()) throw usage(`line ${i + 1}: the input is blank: there is nothing to embed in it`);
      inputs.push(s);
    } else inputs.push(line);
  });
  if (!inputs.length) throw usage(opts.file !== undefined && opts.file !== '-' ? `no input to embed: --file ${blankInput(text, opts.file)}` : 'no input to embed');
  // A blank line among the inputs moves every later index off its line number: said, not done in silence.
  const among = blanks.filter((n) => n < lastLine);
  if (among.length && !io.quiet) io.note(`note: ${counted(among.length, 'blank line')} skipped (${among.length === 1 ? 'line' : 'lines'} ${among.slice(0, 5).join(', ')}${among.length > 5 ? ', …' : ''}): an "index" counts the inputs, not the lines`);
  return inputs;
}

async function runEmbed(ctx: RunContext<EmbedOpts>, args: string[]): Promise<void> {
  const { io, opts, signal, connect } = ctx;
  if (opts.collection !== undefined) return (await import('./collections/embed-one.js')).embedOne(ctx, args);
  const lone = (['id', 'metadata', 'store'] as const).find((k) => opts[k] !== undefined);
  if (lone) throw usage(`--${lone} goes with --collection (-c NAME)`);
  if (opts.json && opts.jsonl) throw usage(`${io.jsonFlag} and --jsonl cannot be combined`);
  if (opts.raw && opts.encodingFormat !== 'base64') throw usage('--raw goes with --encoding-format base64');
  const inputs = await inputsFrom(opts, args, io);
  // What the command line says wrong is said first, then what the settings lack (the key, a default model).
  const connected = await connect();
  const { client } = connected;
  const { checkedDefault } = await import('../context.js');
  try {
    opts.model ??= checkedDefault(await ctx.settings(), 'embedModel');
    if (!opts.model) throw usage('no model: give --model (an embedding model, e.g. local/embed), or set a default: router config set embed_model local/embed');
  } catch (err) {
    await client.close();
    throw err;
  }
  const bodyOf = (part: string[]) => ({
    input: part.length === 1 && inputs.length === 1 ? part[0]! : part,
    model: opts.model!,
    ...(opts.models ? { models: opts.models } : {}),
    ...(opts.dimensions !== undefined ? { dimensions: opts.dimensions } : {}),
    ...(opts.encodingFormat ? { encoding_format: opts.encodingFormat } : {}),
    ...(opts.inputType ? { input_type: opts.inputType } : {}),
    ...(opts.user ? { user: opts.user } : {}),
    ...(providerFrom(opts) ? { provider: providerFrom(opts) } : {}),
  });
  const requests = Math.ceil(inputs.length / opts.perRequest);
  const guard = await guardSpend(ctx, connected, { body: bodyOf(inputs), models: [opts.model, ...(opts.models ?? [])], completes: false, requests }).catch(async (err) => {
    await client.close();
    throw err;
  });
  if (guard.dryRun) return client.close();
  const { decodeEmbedding } = await import('../../client/resources/embeddings.js');
  // More inputs than one request takes go as several, in order; the answer is one (indexes over all inputs, usage summed).
  // With --jsonl each request's lines go out as they come, and the vectors are not kept.
  let first: EmbeddingResponse | undefined;
  const data: EmbeddingResponse['data'] = [];
  let used: Record<string, unknown> = {};
  try {
    for (let from = 0; from < inputs.length; from += opts.perRequest) {
      const part = inputs.slice(from, from + opts.perRequest);
      const res = await client.embeddings.create(bodyOf(part), { signal, routerMetadata: opts.routerMetadata, answering: (id) => ctx.answering(id, '/v1/embeddings') });
      if (opts.routerMetadata && !opts.json) (await import('../answers/routing-note.js')).noteRouting(io, res);
      ctx.logUsage({ endpoint: '/v1/embeddings', model: res.model ?? opts.model, ...(res.id ? { id: res.id } : {}), ...usageFields(res.usage as unknown as Record<string, unknown>) });
      checkOneVectorEach(res.data, part.length);
      for (const d of res.data) {
        d.index += from;
        if (!opts.raw) d.embedding = decodeEmbedding(d.embedding);
      }
      if (opts.jsonl) for (const d of res.data) io.jsonl({ index: d.index, input: inputs[d.index], embedding: d.embedding });
      else for (const d of res.data) data.push(d);
      used = summed(used, res.usage as unknown as Record<string, unknown> | undefined);
      first ??= res;
    }
  } finally {
    await client.close();
  }
  const u = (first!.usage ? used : undefined) as (EmbeddingResponse['usage'] & { cost?: number }) | undefined;
  if (opts.usage) ctx.closingNote(usageLine(u ? { input: u.prompt_tokens, total: u.total_tokens, cost: u.cost } : undefined) + boundNote(guard));
  if (!opts.jsonl) io.json({ ...first!, data, usage: u });
}

/** An answer is one vector per input (index 0..n-1, each once): fewer, more or repeated is no answer to print. */
function checkOneVectorEach(data: EmbeddingResponse['data'], inputs: number): void {
  const seen = new Set(data.map((d) => d.index));
  const missing = Array.from({ length: inputs }, (_, i) => i).filter((i) => !seen.has(i));
  if (data.length === inputs && !missing.length) return;
  const which = missing.length ? `: none for input ${missing.slice(0, 3).map((i) => i + 1).join(', ')}${missing.length > 3 ? ', …' : ''}` : '';
  throw new CliError(`the service answered ${counted(data.length, 'vector')} for ${counted(inputs, 'input')}${which}`, EXIT.SERVER);
}

/** Usage of several answers as one: numbers (tokens, cost) summed, anything else as the first gave it. */
function summed(a: Record<string, unknown>, b: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = { ...a };
  // A cost summed in floating point is rounded to the service's precision (0.0000006, not 6.000000000000001e-7).
  for (const [k, v] of Object.entries(b ?? {})) out[k] = typeof out[k] === 'number' && typeof v === 'number' ? (k.includes('cost') ? roundCost(out[k] + v) : out[k] + v) : (out[k] ?? v);
  return out;
}

/**
 * What the collection commands share: the profile's collections, the model a run embeds with (its
 * --model, else the collection's, else the default), and the sending: the kit's plan under the run's
 * spend guard (--max-cost, --dry-run, the budgets: checked before anything is sent), each answer in
 * the usage ledger.
 */
import type { RunContext } from '../../run.js';
import type { FlagValues } from '../../flags/flags.js';
import { integerIn, modelFlag, OPEN_USER_FLAG, OUTPUT_FLAGS, PROVIDER_FLAGS } from '../../flags/options.js';
import { boundNote, guardSpend, FIXED_SPEND_FLAGS } from '../../spend/spend-guard.js';
import { providerFrom } from '../../io/input.js';
import { usageLine } from '../../io/output.js';
import { usageFields } from '../../../kit/spend/ledger.js';
import { roundCost } from '../../../internal/round-cost.js';
import { grouped } from '../../../internal/counted.js';
import { Collections, type Collection } from '../../../kit/collections/store.js';
import { embedBody, embedTexts, runPlan, type EmbedPlan, type SendOptions } from '../../../kit/collections/embed.js';

/** The flags of a command that embeds into (or searches) a collection. */
export const SEND_FLAGS = {
  model: modelFlag("embedding model (default: the collection's, else ROUTER_EMBED_MODEL or the profile's embed_model); a collection keeps the one it began with", 'embedding'),
  dimensions: { flags: '--dimensions <n>', help: 'output dimensions of a new collection (>= 1); fixed with it', parse: integerIn(1) },
  user: OPEN_USER_FLAG,
  providerOnly: PROVIDER_FLAGS.providerOnly,
  fallbacks: PROVIDER_FLAGS.fallbacks,
  usage: OUTPUT_FLAGS.usage,
  ...FIXED_SPEND_FLAGS,
} as const;

type SendFlags = FlagValues<typeof SEND_FLAGS>;

/** The collections of the run's profile. */
export async function collectionsOf(ctx: RunContext<unknown>): Promise<Collections> {
  return new Collections({ env: ctx.env, profile: (await ctx.settings()).profile });
}

/** The model to embed with: --model, else the collection's, else the default (ROUTER_EMBED_MODEL, the profile's embed_model). */
export async function modelFor(ctx: RunContext<SendFlags>, collection: Collection): Promise<string | undefined> {
  if (ctx.opts.model) return ctx.opts.model;
  const kept = collection.meta()?.model;
  if (kept) return kept;
  const { checkedDefault } = await import('../../context.js');
  const model = checkedDefault(await ctx.settings(), 'embedModel');
  // A new collection with no model is refused next: a missing key is said first, as every command says it before a missing default.
  if (!model) await (await ctx.connect()).client.close();
  return model;
}

/**
 * Sends what the plan has to send (nothing at all when every item is kept already), under the spend
 * guard; returns how many were embedded, undefined on --dry-run.
 */
export async function sendPlan(ctx: RunContext<SendFlags>, collection: Collection, plan: EmbedPlan, more: Pick<SendOptions, 'batchSize' | 'concurrency'> = {}): Promise<number | undefined> {
  if (!plan.send.length) {
    if (!ctx.opts.dryRun) await collection.add(plan.model, plan.dimensions, plan.relabel);
    return 0;
  }
  // A folder that cannot take the vectors (a read-only HOME) is said before they are paid for.
  if (!ctx.opts.dryRun) collection.readyToWrite();
  const batches = Math.ceil(plan.send.length / (more.batchSize ?? plan.send.length));
  // More than one request: their progress on a terminal (a spinner, as ora draws it; none piped or with --quiet).
  const { drawsSpinner, spinnerMaker } = await import('../../io/spinner.js');
  const total = plan.send.length;
  const label = (done: number) => `embedding into ${collection.name}: ${grouped(done)} of ${grouped(total)} items answered`;
  const make = batches > 1 && drawsSpinner(ctx.io) ? await spinnerMaker(ctx.io) : undefined;
  let spinner: ReturnType<NonNullable<typeof make>> | undefined;
  let answered = 0;
  try {
    // Drawn once the spend guard has said its piece (a --dry-run sends nothing and draws none).
    const send = (opts: SendOptions) => ((spinner = make?.(label(0))), runPlan(collection, plan, { ...opts, ...more }));
    return await withSending(ctx, plan, plan.send.map((s) => s.content), batches, send, (n) => spinner && (spinner.text = label((answered += n))));
  } finally {
    spinner?.stop();
  }
}

/** The vector of a query text, embedded as the collection's entries were (one request, under the spend guard). */
export async function queryVector(ctx: RunContext<SendFlags>, plan: Pick<EmbedPlan, 'model' | 'dimensions'>, text: string): Promise<number[] | undefined> {
  return withSending(ctx, plan, [text], 1, async (opts) => (await embedTexts(plan, [text], opts))[0]!);
}

async function withSending<T>(ctx: RunContext<SendFlags>, plan: Pick<EmbedPlan, 'model' | 'dimensions'>, texts: string[], requests: number, send: (opts: SendOptions) => Promise<T>, answered?: (items: number) => void): Promise<T | undefined> {
  const { opts, signal } = ctx;
  const body = { ...(opts.user ? { user: opts.user } : {}), ...(providerFrom(opts) ? { provider: providerFrom(opts) } : {}) };
  const connected = await ctx.connect();
  const { client } = connected;
  let used: { prompt_tokens: number; total_tokens: number; cost?: number } | undefined;
  try {
    const guard = await guardSpend(ctx, connected, { body: embedBody(plan, texts, body) as unknown as Record<string, unknown>, models: [plan.model], completes: false, requests });
    if (guard.dryRun) return undefined;
    const out = await send({
      client,
      signal,
      body,
      answering: (id) => ctx.answering(id, '/v1/embeddings'),
      onAnswer: (res, batch) => {
        answered?.(batch.length);
        ctx.logUsage({ endpoint: '/v1/embeddings', model: res.model ?? plan.model, ...(res.id ? { id: res.id } : {}), ...usageFields(res.usage as unknown as Record<string, unknown>) });
        if (!res.usage) return;
        const u: { prompt_tokens: number; total_tokens: number; cost?: number } = used ?? { prompt_tokens: 0, total_tokens: 0 };
        u.prompt_tokens += res.usage.prompt_tokens ?? 0;
        u.total_tokens += res.usage.total_tokens ?? 0;
        if (typeof res.usage.cost === 'number') u.cost = roundCost((u.cost ?? 0) + res.usage.cost);
        used = u;
      },
    });
    if (opts.usage) ctx.closingNote(usageLine(used ? { input: used.prompt_tokens, total: used.total_tokens, cost: used.cost } : undefined) + boundNote(guard));
    return out;
  } finally {
    await client.close();
  }
}

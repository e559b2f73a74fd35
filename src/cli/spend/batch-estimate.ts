/**
 * The cost bound of a batch file, read line by line: each request's bound (as for one call) at the
 * price the service charges batches (docs/conformance.md: half), summed per model.
 */
import type { Connected } from '../context.js';
import type { RunContext } from '../run.js';
import { CliError, EXIT } from '../exit-codes.js';
import { DEFAULT_API_ROOT } from '../../client/core.js';
import { readLines } from '../../internal/jsonl.js';
import { BATCH_PRICE, callBound, countImages, imagesUnbounded, promptTokenBound, searchesOf, usd, usdBound, type Pricing } from '../../kit/spend/cost-bound.js';
import { capOf, commandPath, HeldBack, pricesOf, pricesOrWhy, type SpendOptions } from './spend-guard.js';
import { rootKey } from '../../internal/api-root.js';
import { roundCost } from '../../internal/round-cost.js';
import type { BudgetHold, Held } from './budget-hold.js';
import { isFinished, type JobRecord, type ShardRecord } from '../../batch/job/store.js';
import { counted } from '../../internal/counted.js';
import { existsSync } from 'node:fs';
import { batchHoldPath } from '../../kit/spend/ledger.js';
import { isTerminalBatchStatus } from '../../client/facts.js';
import type { SentCreate } from '../../kit/spend/sent-create.js';

export interface BatchEstimate {
  model: string;
  requests: number;
  /** USD at most, at the batch price. */
  bound: number;
  /** Requests whose body sets no completion limit: each bounded by the model's own. */
  unlimited: number;
  /** What finished shards of a resumed job really cost (already spent). */
  spent: number;
  /** The model's own completion limit, when the list gives it. */
  maxCompletion?: number;
  /** Under a budget: the bound held from the check on (BudgetHold.toBatch keeps it past the process once the batch is made). */
  hold?: BudgetHold;
  /** Under a budget: each request line's bound, so that a shard of `batch run` holds its own (shardBound). */
  lineBounds?: Map<number, number>;
}

const LIMIT_FIELDS = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'];

/** The bound of one request line of a batch file, at the batch price. */
export function lineBound(p: Pricing, endpoint: string, body: Record<string, unknown>): { bound: number; unlimited: boolean } {
  const limit = LIMIT_FIELDS.map((f) => body[f]).find((v): v is number => typeof v === 'number');
  const completes = endpoint !== '/v1/embeddings';
  const size = { promptTokens: promptTokenBound(body), images: countImages(body), completionTokens: completes ? limit : 0, searches: searchesOf(body) };
  // Images in the answer priced each, with nothing to limit how many: no bound.
  const bound = imagesUnbounded(body, [p]) ? Infinity : callBound(p, size) * BATCH_PRICE;
  return { bound, unlimited: completes && limit === undefined };
}

/** Sums the bound of the file's request lines that `include` takes (all when absent); `perLine` keeps each line's. */
export async function estimateFile(path: string, endpoint: string, p: Pricing, include?: (line: number) => boolean, signal?: AbortSignal, perLine = false): Promise<BatchEstimate> {
  const e: BatchEstimate = { model: p.model, requests: 0, bound: 0, unlimited: 0, spent: 0, ...(perLine ? { lineBounds: new Map<number, number>() } : {}) };
  for await (const line of readLines(path)) {
    signal?.throwIfAborted();
    if (include && !include(line.number)) continue;
    let item: { body?: unknown };
    try {
      item = JSON.parse(line.bytes.toString('utf8')) as { body?: unknown };
    } catch {
      continue;
    }
    if (!item || typeof item.body !== 'object' || item.body === null) continue;
    const { bound, unlimited } = lineBound(p, endpoint, item.body as Record<string, unknown>);
    e.requests++;
    e.bound += bound;
    e.lineBounds?.set(line.number, bound);
    if (unlimited) e.unlimited++;
  }
  return e;
}

/**
 * An estimate as JSON output: snake_case as the API's own fields, and dollars without float noise
 * (the bound rounded up at 1e-10 USD, so that it stays a bound).
 */
export function estimateJson(e: BatchEstimate) {
  return {
    model: e.model,
    requests: e.requests,
    bound: Number.isFinite(e.bound) ? Math.ceil(e.bound * 1e10) / 1e10 : null,
    unlimited: e.unlimited,
    spent: roundCost(e.spent),
    max_completion_tokens: e.maxCompletion ?? null,
  };
}

/** The requests that set no max_tokens, as the subject of a clause: "1 request sets", "2 requests set". */
const unlimited = (e: BatchEstimate): string => `${counted(e.unlimited, 'request')} ${e.unlimited === 1 ? 'sets' : 'set'}`;

/** How an estimate reads: one line per model. */
export function estimateLine(e: BatchEstimate): string {
  const open = e.unlimited ? `; ${unlimited(e)} no max_tokens, ${e.unlimited === 1 ? 'so it is' : 'each'} bounded by the model's ${e.maxCompletion ?? 'maximum'} tokens` : '';
  const spent = e.spent ? `, plus ${usd(e.spent)} its finished shards cost` : '';
  return `cost bound: ${e.model}: ${counted(e.requests, 'request')}, at most ${usdBound(e.bound)} at the batch price (half)${spent}${open}`;
}

export interface BatchSpend {
  path: string;
  endpoint: string;
  model: string;
  include?: (line: number) => boolean;
  /** What finished shards already cost. */
  spent?: number;
}

/**
 * The estimate of a batch's requests, checked against --max-cost and the budgets before anything
 * is submitted (exit 4 when it could pass one). Without a cap and without --dry-run, nothing is read.
 */
export async function checkBatchSpend(ctx: RunContext<SpendOptions>, connected: Connected, b: BatchSpend): Promise<BatchEstimate | undefined> {
  const { settings } = connected;
  const budgeted = (settings.dailyBudget !== undefined || settings.monthlyBudget !== undefined) && !ctx.opts.dryRun && !ctx.opts.ignoreBudget && ctx.logging;
  if (!budgeted) return checkOnce(ctx, connected, b);
  // As concurrent chats: checked under the budgets' lock beside what calls and batches under way hold, and held.
  const { BudgetHold, heldByOthers, withBudgetLock } = await import('./budget-hold.js');
  return withBudgetLock(ctx.env, ctx.signal, async () => {
    const e = await checkOnce(ctx, connected, b, heldByOthers(ctx.env, settings.profile)).catch((err: unknown) => {
      throw err instanceof HeldBack ? new CliError(`${err.message}: nothing was submitted`, EXIT.PAYMENT) : err;
    });
    if (e) ctx.holdBudget((e.hold = new BudgetHold(ctx.env, settings.profile, e.bound, { command: commandPath(ctx), api_root: rootKey(settings.apiRoot ?? DEFAULT_API_ROOT), batch: true, ...(connected.keyHash ? { key_hash: connected.keyHash } : {}) })));
    return e;
  });
}

/**
 * A batch an earlier create made, found by its rerun: nothing is sent, so no budget refuses it; under a
 * budget its bound is held past this process (as a create's is: BudgetHold.toBatch) until its cost is in
 * the ledger, unless it has ended or is held already (the earlier create got that far). Why it could not be.
 */
export async function holdFoundBatch(ctx: RunContext<SpendOptions>, { client, settings, keyHash }: Connected, b: BatchSpend, batch: { id: string; status: string; created_at?: number }): Promise<string | undefined> {
  const budgeted = (settings.dailyBudget !== undefined || settings.monthlyBudget !== undefined) && !ctx.opts.ignoreBudget && ctx.logging;
  if (!budgeted || isTerminalBatchStatus(batch.status) || existsSync(batchHoldPath(ctx.env, batch.id))) return undefined;
  const prices = await pricesOf(ctx, client, settings.apiRoot ?? DEFAULT_API_ROOT, [b.model]);
  if (typeof prices === 'string') return `the budgets do not hold batch ${batch.id}: its cost cannot be bounded (${prices})`;
  const e = await estimateFile(b.path, b.endpoint, prices[0]!, undefined, ctx.signal);
  const { BudgetHold, withBudgetLock } = await import('./budget-hold.js');
  return withBudgetLock(ctx.env, ctx.signal, async () => {
    try {
      // Its key and since when (the batch's making, the service's clock): settled by that key's spend if it ends naming no cost.
      const hold = new BudgetHold(ctx.env, settings.profile, e.bound, { command: commandPath(ctx), api_root: rootKey(settings.apiRoot ?? DEFAULT_API_ROOT), batch: true, ...(keyHash ? { key_hash: keyHash } : {}) });
      if (typeof batch.created_at === 'number') hold.set(e.bound, false, new Date(batch.created_at * 1000).toISOString());
      return hold.toBatch(ctx.env, batch.id);
    } catch (err) {
      return `the budgets do not hold batch ${batch.id}: ${(err as Error).message}`;
    }
  });
}

/**
 * A rerun of a create learnt what its unanswered send made (`batchId`, or nothing): the hold that send kept past its process
 * (src/kit/spend/sent-create.ts) becomes that batch's, or goes. Where the holds cannot be locked, the kept hold stays (counted).
 */
export async function settleEarlierSend(ctx: RunContext<unknown>, sent: SentCreate, batchId: string | undefined): Promise<void> {
  const { heldByOthers, holdsDir, withBudgetLock } = await import('./budget-hold.js');
  if (!existsSync(holdsDir(ctx.env))) return;
  const { settleUnheard } = await import('../../kit/spend/sent-create.js');
  await withBudgetLock(ctx.env, ctx.signal, async () => {
    // A create killed is first seen dead here: its hold kept (sent, unanswered) before it is settled.
    heldByOthers(ctx.env, '');
    settleUnheard(holdsDir(ctx.env), ctx.env, sent, batchId);
  }).catch(() => {});
}

async function checkOnce(ctx: RunContext<SpendOptions>, { client, settings }: Connected, b: BatchSpend, held?: Held): Promise<BatchEstimate | undefined> {
  const cap = await capOf(ctx, settings, held);
  if (!cap && !ctx.opts.dryRun) return undefined;
  const prices = await pricesOrWhy(ctx, cap, () => pricesOf(ctx, client, settings.apiRoot ?? DEFAULT_API_ROOT, [b.model]));
  if (typeof prices === 'string') {
    if (cap) throw new CliError(`cannot bound the cost of this batch for ${cap.name}: ${prices}`, EXIT.PAYMENT);
    ctx.io.note(`cost bound: unknown (${prices})`);
    return undefined;
  }
  const e = { ...(await estimateFile(b.path, b.endpoint, prices[0]!, b.include, ctx.signal, held !== undefined)), spent: b.spent ?? 0, maxCompletion: prices[0]!.maxCompletion };
  // --max-cost caps the whole job, finished shards included; a budget only what is still to be spent.
  const whole = e.bound + (cap?.name.startsWith('--max-cost') ? e.spent : 0);
  if (cap && whole > cap.usd) throw new CliError(`this batch could cost up to ${usdBound(whole)} (${counted(e.requests, 'request')} to ${e.model} at the batch price), over ${cap.name}: nothing was submitted; ${fixOf(e, cap.name)}`, EXIT.PAYMENT);
  return e;
}

/** How a refused batch can be sent: a lower max_tokens per line bounds it lower; past that, the cap. */
function fixOf(e: BatchEstimate, cap: string): string {
  const lines = e.unlimited ? `set max_tokens on its lines (${unlimited(e)} none, so ${e.unlimited === 1 ? 'it' : 'each'} is bounded by the model's ${e.maxCompletion ?? 'maximum'} tokens)` : 'lower max_tokens on its lines';
  return `${lines}, or ${cap.startsWith('--max-cost') ? 'raise --max-cost' : 'pass --ignore-budget'}`;
}

/** A job's lines that are still to be paid for (in shards not finished), and what its finished shards cost. */
export function pendingOfJob(job: JobRecord): { include: (line: number) => boolean; spent: number } {
  const open = job.shards.filter((s) => !isFinished(s));
  const spent = job.shards.filter(isFinished).reduce((sum, s) => sum + (s.usage?.cost ?? 0), 0);
  const include = (line: number) => open.some((s) => line >= s.first_line && line <= s.last_line && (!s.lines || s.lines.includes(line)));
  return { include, spent };
}

/**
 * A shard of `batch run` just submitted, under a budget: its lines' bound moves from the run's hold to
 * its batch's own, which holds past this process until the batch's cost is in the ledger (else a
 * run that ends, or is killed, after submitting would let the budget go while its batches still spend).
 */
export function holdShard(e: BatchEstimate | undefined, env: NodeJS.ProcessEnv, shard: ShardRecord): string | undefined {
  if (!e?.hold || !e.lineBounds || !shard.batch_id) return undefined;
  let usd = 0;
  const lines = shard.lines ? new Set(shard.lines) : undefined;
  for (let n = shard.first_line; n <= shard.last_line; n++) if (!lines || lines.has(n)) usd += e.lineBounds.get(n) ?? 0;
  return e.hold.share(env, shard.batch_id, usd);
}

/** The pre-submit check of `batch run`: the job's estimate against --max-cost and the budgets. */
export async function checkJobSpend(ctx: RunContext<SpendOptions>, connected: Connected, job: JobRecord): Promise<BatchEstimate | undefined> {
  if (!job.shards.some((s) => !s.batch_id) && !ctx.opts.dryRun) return undefined;
  return checkBatchSpend(ctx, connected, { path: job.input.path, endpoint: job.endpoint, model: job.model, ...pendingOfJob(job) });
}

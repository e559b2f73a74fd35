/** `router usage --reconcile`: runs src/kit/spend/reconcile.ts and says what it did (stderr; --json to stdout). */
import type { RunContext } from '../run.js';
import { ASK_AGAIN_MS, reconcile, type ReconcileReport } from '../../kit/spend/reconcile.js';
import { roundCost } from '../../internal/round-cost.js';
import { usd } from '../../kit/spend/cost-bound.js';
import { counted, grouped } from '../../internal/counted.js';

export async function runReconcile(ctx: RunContext<{ json?: boolean }>, limit: number): Promise<void> {
  const { io } = ctx;
  const { client, settings, keyHash } = await ctx.connect({ keyHash: true });
  // Calls killed before their answer named them are settled by their key's spend, which a management key reads.
  const manager = settings.managementKey !== undefined || settings.from.managementKey !== undefined ? (await ctx.connect({ management: true })).client : undefined;
  try {
    const { report, failure } = await reconcile({ env: ctx.env, profile: settings.profile, client, manager, limit, signal: ctx.signal, keyHash });
    if (ctx.opts.json) io.json(report);
    const n = report.reconciled.length;
    const diff = report.charged_cost - report.reported_cost;
    const sign = diff > 0 ? '+' : diff < 0 ? '-' : '±';
    const parts = [`reconciled ${counted(n, 'call')} of profile "${settings.profile}"${n ? `: reported ${usd(report.reported_cost)}, charged ${usd(report.charged_cost)} (${sign}${usd(Math.abs(diff))})` : ''}`];
    if (report.not_found.length) parts.push(`${report.not_found.length} unknown to the service (marked, not asked again)`);
    if (report.unknown_here.length) parts.push(`unknown to this server: ${counted(report.unknown_here.length, 'call')} made before others it knows, probably at an emulator whose state was reset (marked, not asked again)`);
    if (report.pending.length) parts.push(`${report.pending.length} not known to the service yet (asked again in ${ASK_AGAIN_MS / 60_000} minutes)`);
    if (report.waiting.length) parts.push(`${counted(report.waiting.length, 'call')} not known to the service when asked in the last ${ASK_AGAIN_MS / 60_000} minutes, not asked again before`);
    parts.push(...heldWords(report.held));
    parts.push(...batchWords(report.batches));
    parts.push(...sentWords(report.sent));
    parts.push(leftWords(report.left, limit));
    // Calls made at another service: asked of this one, they would be "not known yet", then given up on.
    for (const [root, count] of Object.entries(report.elsewhere)) parts.push(`${counted(count, 'call')} made at ${root}, not asked here (reconcile ${count === 1 ? 'it' : 'them'} there: router usage --reconcile --api-root ${root}, with its key)`);
    io.note(parts.join('; '));
    // What stopped the run is the command's error line and exit code; what it did is kept.
    if (failure) throw failure;
  } finally {
    await Promise.all([client.close(), manager?.close()]);
  }
}

/** What became of the calls counted at their bound before an answer named them (settled by their key's spend, reconcile-held.ts). */
function heldWords(held: ReconcileReport['held']): string[] {
  const parts: string[] = [];
  const n = held.settled.length;
  if (n) {
    const bound = roundCost(held.settled.reduce((a, c) => a + c.bound, 0));
    const charged = roundCost(held.settled.reduce((a, c) => a + c.charged, 0));
    parts.push(`settled ${counted(n, 'call')} killed or lost before the service named ${n === 1 ? 'it' : 'them'} by ${n === 1 ? 'its' : 'their'} key's spend at the time: counted ${usd(bound)}, now ${usd(charged)}`);
  }
  if (held.waiting.length) parts.push(`${counted(held.waiting.length, 'call')} killed or lost before the service named ${held.waiting.length === 1 ? 'it' : 'them'}, settled by a run an hour after ${held.waiting.length === 1 ? 'it was' : 'they were'} sent`);
  const why = new Map<string, number>();
  for (const u of held.unsettled) why.set(u.why, (why.get(u.why) ?? 0) + 1);
  for (const [reason, count] of why) parts.push(`${counted(count, 'call')} killed or lost before the service named ${count === 1 ? 'it stays' : 'them stay'} at ${count === 1 ? 'its' : 'their'} bound: ${reason}`);
  return parts;
}

/** What became of the batches that ended naming no cost (settled by their key's spend, reconcile-batch.ts). */
function batchWords(b: ReconcileReport['batches']): string[] {
  const parts: string[] = [];
  if (b.settled.length) {
    const bound = roundCost(b.settled.reduce((a, c) => a + c.bound, 0));
    const charged = roundCost(b.settled.reduce((a, c) => a + c.charged, 0));
    parts.push(`settled ${counted(b.settled.length, 'batch', 'batches')} that ended naming no cost by the key's spend: held ${usd(bound)}, now ${usd(charged)}`);
  }
  if (b.waiting.length) parts.push(`${counted(b.waiting.length, 'batch', 'batches')} that ended naming no cost, settled by a run an hour after seen ended (once the key's spend counts their requests)`);
  for (const u of b.unsettled) parts.push(`${u.id} stays held at its bound: ${u.why}`);
  return parts;
}

/** What became of the kept sends of creates never answered that nothing joined (reconcile-sent.ts). */
function sentWords(b: ReconcileReport['sent']): string[] {
  const parts: string[] = [];
  if (b.settled.length) {
    const bound = roundCost(b.settled.reduce((a, c) => a + c.bound, 0));
    const charged = roundCost(b.settled.reduce((a, c) => a + c.charged, 0));
    parts.push(`settled ${counted(b.settled.length, 'unanswered batch create')} by the key's spend in its batch's window: held ${usd(bound)}, now ${usd(charged)}`);
  }
  if (b.waiting.length) parts.push(`${counted(b.waiting.length, 'unanswered batch create')} held until its batch's 24-hour window and an hour more have passed`);
  for (const u of b.unsettled) parts.push(`${u.id} stays held at its bound: ${u.why}`);
  return parts;
}

/** What is left to reconcile and how to go on: a run asks at most --limit calls, and the next run the next ones. */
function leftWords(left: number, limit: number): string {
  if (!left) return 'none left';
  if (left <= limit) return `${left} left: run router usage --reconcile again`;
  return `${grouped(left)} left, ${grouped(limit)} a run: run router usage --reconcile --limit ${Math.min(left, 10_000)} to ask ${left > 10_000 ? '10,000 of them' : 'them all'}, or again as it is to ask the next ${grouped(limit)}`;
}

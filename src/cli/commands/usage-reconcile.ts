/** `router usage --reconcile`: runs src/kit/spend/reconcile.ts and says what it did (stderr; --json to stdout). */
import type { RunContext } from '../run.js';
import { ASK_AGAIN_MS, reconcile } from '../../kit/spend/reconcile.js';
import { usd } from '../../kit/spend/cost-bound.js';
import { counted, grouped } from '../../internal/counted.js';

export async function runReconcile(ctx: RunContext<{ json?: boolean }>, limit: number): Promise<void> {
  const { io } = ctx;
  const { client, settings } = await ctx.connect();
  try {
    const { report, failure } = await reconcile({ env: ctx.env, profile: settings.profile, client, limit, signal: ctx.signal });
    if (ctx.opts.json) io.json(report);
    const n = report.reconciled.length;
    const diff = report.charged_cost - report.reported_cost;
    const sign = diff > 0 ? '+' : diff < 0 ? '-' : '±';
    const parts = [`reconciled ${counted(n, 'call')} of profile "${settings.profile}"${n ? `: reported ${usd(report.reported_cost)}, charged ${usd(report.charged_cost)} (${sign}${usd(Math.abs(diff))})` : ''}`];
    if (report.not_found.length) parts.push(`${report.not_found.length} unknown to the service (marked, not asked again)`);
    if (report.unknown_here.length) parts.push(`unknown to this server: ${counted(report.unknown_here.length, 'call')} made before others it knows, probably at an emulator whose state was reset (marked, not asked again)`);
    if (report.pending.length) parts.push(`${report.pending.length} not known to the service yet (asked again in ${ASK_AGAIN_MS / 60_000} minutes)`);
    if (report.waiting.length) parts.push(`${counted(report.waiting.length, 'call')} not known to the service when asked in the last ${ASK_AGAIN_MS / 60_000} minutes, not asked again before`);
    parts.push(leftWords(report.left, limit));
    // Calls made at another service: asked of this one, they would be "not known yet", then given up on.
    for (const [root, count] of Object.entries(report.elsewhere)) parts.push(`${counted(count, 'call')} made at ${root}, not asked here (reconcile ${count === 1 ? 'it' : 'them'} there: router usage --reconcile --api-root ${root}, with its key)`);
    io.note(parts.join('; '));
    // What stopped the run is the command's error line and exit code; what it did is kept.
    if (failure) throw failure;
  } finally {
    await client.close();
  }
}

/** What is left to reconcile and how to go on: a run asks at most --limit calls, and the next run the next ones. */
function leftWords(left: number, limit: number): string {
  if (!left) return 'none left';
  if (left <= limit) return `${left} left: run router usage --reconcile again`;
  return `${grouped(left)} left, ${grouped(limit)} a run: run router usage --reconcile --limit ${Math.min(left, 10_000)} to ask ${left > 10_000 ? '10,000 of them' : 'them all'}, or again as it is to ask the next ${grouped(limit)}`;
}

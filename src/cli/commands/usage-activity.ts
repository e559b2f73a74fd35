/** `router usage --activity`: what the service recorded (GET /v1/activity, management key), summed by day or model. */
import type { RunContext } from '../run.js';
import { managementRefusal } from '../context.js';
import { usage } from '../exit-codes.js';
import { cutText } from '../../internal/first-words.js';

const ACTIVITY_DAYS = 30;
const DAY_MS = 86_400_000;

/** A group's sums (usage.ts prints the ledger's and the service's alike). */
export interface Totals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
}

/** The service's rows (a UTC day, a model and an endpoint each) from the day of `from`, summed per day or model. */
export async function activityTotals(ctx: RunContext<unknown>, from: number, by: string, key: string | undefined): Promise<{ groups: Map<string, Totals>; total: Totals }> {
  if (by !== 'day' && by !== 'model') throw usage(`--activity sums what the service recorded, which knows no ${by}: --by day or --by model`);
  if (key !== undefined && !/^[0-9a-f]{64}$/i.test(key)) throw usage(`--key "${cutText(key, 70)}" is not a key hash: 64 hex digits, as router keys list prints it`);
  const { client, settings } = await ctx.connect({ management: true });
  let items;
  try {
    items = await client.activity.list({ apiKeyHash: key?.toLowerCase() }, { signal: ctx.signal });
  } catch (err) {
    throw managementRefusal(err, settings, 'usage --activity needs');
  } finally {
    await client.close();
  }
  const first = new Date(from).toISOString().slice(0, 10);
  // The service keeps 30 days of activity: a --since further back is said, not summed short in silence
  // (unless the answer reaches further back itself: what it holds is counted).
  const kept = new Date(Date.now() - ACTIVITY_DAYS * DAY_MS).toISOString().slice(0, 10);
  if (first < kept && !items.some((item) => item.date < kept)) ctx.io.note(`note: the service keeps its last ${ACTIVITY_DAYS} days of activity: nothing before ${kept} is counted (--since asked from ${first})`);
  const groups = new Map<string, Totals>();
  const total: Totals = { calls: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 };
  for (const item of items) {
    if (item.date < first) continue;
    const name = by === 'day' ? item.date : item.model;
    let group = groups.get(name);
    if (!group) groups.set(name, (group = { calls: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 }));
    for (const t of [group, total]) {
      t.calls += item.requests;
      t.prompt_tokens += item.prompt_tokens;
      t.completion_tokens += item.completion_tokens;
      t.total_tokens += item.prompt_tokens + item.completion_tokens;
      t.cost += item.usage;
    }
  }
  // Nothing recorded reads as "no calls": the usual reason is that today's are not in it yet.
  if (!groups.size) ctx.io.note('note: the service recorded no activity in these days: it holds completed UTC days, so today\'s calls show tomorrow (router usage, without --activity, counts them now)');
  return { groups, total };
}

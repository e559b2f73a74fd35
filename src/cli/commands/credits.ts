/** `router credits`: what the account bought, spent and has left (GET /v1/credits, management key). */
import { managementRefusal } from '../context.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import { described } from '../io/described.js';
import { usd } from '../../kit/spend/cost-bound.js';
import { decimal } from '../../internal/decimal.js';
import { roundCost } from '../../internal/round-cost.js';

export const credits = defineCommand({
  name: 'credits',
  jsonFields: ['total_credits', 'total_usage', 'balance'],
  summary: "the account's credits and balance (management key)",
  description: "The account's credits: bought (total_credits), spent (total_usage) and the balance left. Needs the management key.",
  flags: { json: { flags: '--json', help: 'print {total_credits, total_usage, balance}' } },
  notes: 'Piped, one tab-separated line: credits, used, balance (USD, plain decimals).',
  examples: ['router credits', 'router credits --json --jq .balance'],
  run: runCredits,
});

async function runCredits(ctx: RunContext<{ json?: boolean }>): Promise<void> {
  const { io, opts } = ctx;
  const { client, settings } = await ctx.connect({ management: true });
  try {
    const c = await client.credits.get({ signal: ctx.signal });
    const balance = roundCost(c.total_credits - c.total_usage);
    if (opts.json) return io.json({ total_credits: c.total_credits, total_usage: c.total_usage, balance });
    if (!io.stdoutTTY) return void io.out(`${decimal(c.total_credits)}\t${decimal(c.total_usage)}\t${decimal(balance)}\n`);
    io.out(described(io, [['credits', usd(c.total_credits)], ['used', usd(c.total_usage)], ['balance', usd(balance)]]));
  } catch (err) {
    // A 401 is about the key sent, which here is the management key (or, with none set, the API key).
    throw managementRefusal(err, settings, 'credits need');
  } finally {
    await client.close();
  }
}

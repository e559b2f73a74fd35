/** `router generation ID`: what one call really cost, once it ran (GET /v1/generation?id=). */
import type { Generation } from '../../client/resources/generations.js';
import { usage } from '../exit-codes.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import { described } from '../io/described.js';
import { usd } from '../../kit/spend/cost-bound.js';
import { decimal } from '../../internal/decimal.js';
import { cutText } from '../../internal/first-words.js';

export const generation = defineCommand({
  name: 'generation',
  jsonFields: ['id', 'model', 'total_cost', 'usage', 'created_at', 'provider_name', 'streamed', 'cancelled', 'latency', 'generation_time', 'moderation_latency', 'finish_reason', 'native_finish_reason', 'tokens_prompt', 'tokens_completion', 'native_tokens_prompt', 'native_tokens_completion', 'native_tokens_reasoning', 'native_tokens_cached', 'native_tokens_completion_images', 'is_byok', 'api_type', 'upstream_id', 'upstream_inference_cost', 'cache_discount', 'origin', 'http_referer', 'user_agent', 'external_user', 'session_id', 'request_id', 'router', 'service_tier', 'data_region', 'workspace_id', 'app_id', 'preset_id', 'provider_responses', 'web_search_engine', 'num_media_prompt', 'num_input_audio_prompt', 'num_media_completion', 'num_search_results', 'num_fetches'],
  summary: 'what a call really cost, by its generation id',
  description:
    'What the service recorded of one generation once it ran: the cost it charged, the native token counts of the provider that served it, and how long it took. The id is the "id" of a chat or Responses answer (router chat --json prints it; the usage ledger keeps it).',
  args: [{ name: '<id>', help: 'the generation id (gen-…)' }],
  flags: { json: { flags: '--json', help: "print the service's record as it is (total_cost, native_tokens_*, provider_name, latency, …)" } },
  notes: `The service may need a moment after a call before it knows the generation: a 404 right after one means "not yet" as often as "no such id". router usage --reconcile puts these costs into the usage ledger.
Piped, one tab-separated line per field: name, value (the cost in USD as a plain number).`,
  examples: [
    'router generation "$(router chat --no-stream --json --jq .id \\\n--model local/echo hi)"',
    'router generation "$(router chat --no-stream --json --jq .id \\\n--model local/lorem "write 9 words")" \\\n--json --jq .total_cost',
  ],
  run: runGeneration,
});

async function runGeneration(ctx: RunContext<{ json?: boolean }>, id: string): Promise<void> {
  const { io, opts } = ctx;
  if (!id.trim() || /\s/.test(id)) throw usage(`"${cutText(id, 60)}" is not a generation id (no spaces; e.g. gen-1717171717-abc)`);
  const { client } = await ctx.connect();
  try {
    const g = await client.generations.get(id, { signal: ctx.signal });
    if (opts.json) return io.json(g);
    const rows = describe(g, io.stdoutTTY);
    io.out(described(io, rows));
  } finally {
    await client.close();
  }
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const ms = (v: unknown) => (num(v) === undefined ? '-' : `${Math.round(num(v)!)} ms`);
const count = (v: unknown) => (num(v) === undefined ? '-' : String(v));

/** A generation's fields, a line each; piped, the cost a plain number (as every piped listing gives amounts). */
function describe(g: Generation, terminal: boolean): [string, string][] {
  return [
    ['id', g.id],
    ['model', g.model],
    ['provider', g.provider_name ?? '-'],
    ['cost', num(g.total_cost) === undefined ? '-' : terminal ? usd(g.total_cost) : decimal(g.total_cost)],
    ['tokens', `prompt ${count(g.tokens_prompt)}, completion ${count(g.tokens_completion)}`],
    ['native tokens', `prompt ${count(g.native_tokens_prompt)}, completion ${count(g.native_tokens_completion)}, reasoning ${count(g.native_tokens_reasoning)}, cached ${count(g.native_tokens_cached)}`],
    ['latency', `${ms(g.latency)} (generation ${ms(g.generation_time)})`],
    ['finish', g.finish_reason ?? '-'],
    ['streamed', g.streamed === null || g.streamed === undefined ? '-' : g.streamed ? 'yes' : 'no'],
    ['created', g.created_at],
    // `router serve`'s own field: a record lost to a kill -9 of the gateway and made again from its charge at start.
    ...((g as { recovered?: unknown }).recovered === true ? [['recovered', 'yes: made again from its charge after router serve was killed; only its cost and time are known'] as [string, string]] : []),
  ];
}

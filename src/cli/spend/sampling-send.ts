/** A server's sampling request (src/cli/tools/mcp-answers.ts) as one more call of the command that runs its tools. */
import type { ChatCompletion, ChatCompletionRequest, ChatUsage } from '../../client/types.js';
import { usageFields } from '../../kit/spend/ledger.js';
import { guardNext, type Guard, type SpendOptions } from './spend-guard.js';
import type { RunContext } from '../run.js';
import type { Connected } from '../context.js';

/** The command's sampling requests as more calls of it: each held to what the cap has left once `spent()` is taken off, its cost and usage added and logged. */
export function samplingSender(ctx: RunContext<SpendOptions>, connected: Connected, guard: Guard, spent: () => number, add: (cost: number, usage: ChatUsage | undefined) => void): (req: ChatCompletionRequest, signal: AbortSignal) => Promise<ChatCompletion> {
  return async (req, signal) => {
    await guardNext(ctx, connected, guard, { body: req as unknown as Record<string, unknown>, models: [req.model], limitField: 'max_completion_tokens', limitFlag: "the sampling request's maxTokens", explicitLimit: false, completes: true }, spent());
    const completion = await connected.client.chat.create(req, { signal });
    add(typeof completion.usage?.cost === 'number' ? completion.usage.cost : (guard.bound ?? 0), completion.usage);
    ctx.logUsage({ endpoint: '/v1/chat/completions', model: completion.model || req.model, ...(completion.id ? { id: completion.id } : {}), ...usageFields(completion.usage as unknown as Record<string, unknown>) });
    return completion;
  };
}

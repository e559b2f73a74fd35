/** One chat request under a spend guard, as every kit loop sends it: checked first, its cost recorded after. */
import type { ChatCompletion, ChatCompletionRequest } from '../../client/types.js';
import { usageFields } from './ledger.js';
import type { SpendCall, SpendGuard } from './spend-guard.js';

/**
 * Sends `req` with `send`: under a guard it is checked before (its `max_completion_tokens` may be lowered to fit;
 * `explicitLimit`: the caller set that limit) and its usage recorded after, in the ledger as `command`.
 */
export async function guardedChat<T extends ChatCompletion>(guard: SpendGuard | undefined, req: ChatCompletionRequest, explicitLimit: boolean, command: string, send: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!guard) return send();
  const call: SpendCall = { body: req, models: [req.model, ...(req.models ?? [])], limitField: 'max_completion_tokens', limitFlag: 'max_completion_tokens', explicitLimit, completes: true };
  await guard.check(call);
  const sentUnstopped = !signal?.aborted;
  const completion = await send().catch((err: unknown) => {
    // Stopped by the caller's signal once sent (a stream cut short): the service may have carried it out, as on
    // the guard's own signal. Counted at its bound, as an answer lost is; an abort before sending sends nothing.
    guard.failed(sentUnstopped && signal?.aborted ? { maybeDelivered: true, cause: err } : err, call);
    throw err;
  });
  guard.record({ command, endpoint: '/v1/chat/completions', model: completion.model || req.model, ...(completion.id ? { id: completion.id } : {}), ...usageFields(completion.usage as unknown as Record<string, unknown>) }, call);
  return completion;
}

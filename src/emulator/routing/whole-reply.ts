import { afterAnswers, type Ctx } from '../http/http.js';
import { Serialized } from '../http/serialized.js';
import type { Served } from '../resources/generations.js';
import type { StopSignal } from '../providers/types.js';
import type { Candidate } from './candidates.js';
import type { GatewayCharge } from './gateway-credits.js';
import { keepUpstreamAnswer, ownId, type Asked, type UpstreamAnswer } from './kept.js';

type Body = Record<string, unknown>;

/**
 * What the upstream of a whole (not streamed) answer hears of its caller's going: nothing. The answer
 * is read to its end after the caller is gone (bounded by the provider's `timeout_ms` and
 * `first_event_timeout_ms`, let go when the gateway stops), then charged and kept: the upstream bills
 * the operator for it all the same, and the service bills such a request in full. A replay ends its
 * wait when `caller` goes: its recorded answer is there at once.
 */
export const readToEnd = (caller: StopSignal): StopSignal => ({ aborted: false, reason: undefined, caller, addEventListener() {}, removeEventListener() {} });

/**
 * A whole answer of `c`: given the gateway's own id, charged `cost` (on disk before the answer ends:
 * answer-after-charges.ts), sent unless its caller is gone (then charged and kept only), and kept for
 * `GET /v1/generation` with `got`'s end, text and tier once its last byte is out (a kill -9 between
 * loses no record: the charge's journal line names it, charged-generations.ts).
 */
export function deliverWhole(ctx: Ctx, c: Candidate, asked: Asked, charge: GatewayCharge, gone: StopSignal, answer: Body, cost: number, apiType: Served['apiType'], got: Pick<UpstreamAnswer, 'finish' | 'text' | 'tier'> = {}): void {
  const upstreamId = ownId(ctx, c, answer, apiType === 'embeddings' ? 'emb' : 'gen');
  charge(cost);
  if (!gone.aborted) ctx.send(200, new Serialized(JSON.stringify(answer)), { 'x-generation-id': answer.id as string });
  const kept: UpstreamAnswer = { ...got, id: answer.id, upstreamId, usage: answer.usage, cost: charge.charged ?? cost, streamed: false };
  afterAnswers(() => keepUpstreamAnswer(ctx, c, asked, apiType, kept));
}

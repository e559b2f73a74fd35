/**
 * One request of a batch over the gateway's providers (routing/gateway.ts complete()): not streamed, each
 * candidate in turn, then all of them again after a pause while every one failed.
 */
import { validateChat } from '../resources/chat.js';
import type { CassetteDeck } from '../providers/cassette.js';
import type { StopSignal, UpstreamReply } from '../providers/types.js';
import type { Candidate, Catalog } from './candidates.js';
import { allFailed, noEndpoints, pauseAfter, type Attempt } from './metadata.js';
import { batchCandidates } from './batch-bound.js';
import { embeddingsUsage, priceUsage } from './usage.js';
import { wholeResponse } from './responses.js';
import { upstreamBody } from './upstream-body.js';
import { knownUnstarted } from './unstarted.js';
import { faulted } from './provider-fault.js';
import type { FaultRule } from '../http/faults.js';

type Body = Record<string, unknown>;
type FirstWhole = (candidates: Candidate[], passed: Attempt[], ask: (c: Candidate) => Promise<UpstreamReply>, named: boolean, gone?: StopSignal) => Promise<{ answer: Body; c: Candidate } | undefined>;
const RETRY_PAUSES_MS = [500, 2_000]; // a batch request whose every provider failed is tried again after these

/**
 * Every candidate in turn, then again after a pause while all failed (RETRY_PAUSES_MS), only those known not
 * to have begun it (unstarted.ts); usage priced, not charged (the batch is, at its end). `served.provider`: who answered.
 * `fault`: the batch's `provider=` fault, met by each request as by a call alone (provider-fault.ts).
 */
export async function completeThrough(body: Body, endpoint: string, served: { provider?: string }, catalog: Catalog, firstWhole: FirstWhole, deck: CassetteDeck | undefined, fault?: FaultRule): Promise<Body> {
  const passed: Attempt[] = [];
  const { how, asked, candidates } = batchCandidates(body, endpoint, catalog, passed);
  if (endpoint === '/v1/chat/completions') validateChat(body);
  if (!candidates.length) throw noEndpoints(body, catalog, how.kind, (c) => !!how.call(c.adapter));
  // Providers that may have generated it (any answer, a timeout once sent, a cut): never asked it again.
  const spent = new Set<Candidate>();
  const ask = (c: Candidate) => (faulted(fault, c) ?? how.call(c.adapter)!.call(c.adapter, { body: upstreamBody(asked, c, false), stream: false, signal: AbortSignal.timeout(10 * 60_000) })).then(
    (reply) => (spent.add(c), reply),
    (err: unknown) => { if (!knownUnstarted(err)) spent.add(c); throw err; });
  for (const pause of [0, ...RETRY_PAUSES_MS]) {
    const left = candidates.filter((c) => !spent.has(c));
    if (!left.length || (pause && !(await pauseAfter(pause, passed)))) break;
    const got = await firstWhole(left, passed, ask, how.named);
    if (got) {
      if (how.named) priceUsage(endpoint === '/v1/embeddings' ? embeddingsUsage(got.answer, asked.input) : got.answer.usage, got.c);
      else wholeResponse(got.answer, got.c, asked);
      served.provider = got.c.slug;
      await deck?.allKept(); // its result after its cassette: a kill -9 leaves no result whose exchange was not kept
      return got.answer;
    }
  }
  throw allFailed(passed);
}

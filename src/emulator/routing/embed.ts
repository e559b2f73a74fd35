import { HttpError, type Ctx } from '../http/http.js';
import { gatewaysBefore } from '../http/loop-guard.js';
import type { StopSignal, UpstreamReply } from '../providers/types.js';
import { candidatesFor, type Candidate, type Catalog } from './candidates.js';
import { allFailed, metadataFor, noEndpoints, type Attempt } from './metadata.js';
import { upstreamBody } from './upstream-body.js';
import { faulted } from './provider-fault.js';
import { callerGone } from './caller-gone.js';
import { embeddingsUsage, priceUsage } from './usage.js';
import { gatewayCredits, type Estimates } from './gateway-credits.js';
import type { Asked } from './kept.js';
import { deliverWhole, readToEnd } from './whole-reply.js';

type Body = Record<string, unknown>;
type FirstWhole = (candidates: Candidate[], passed: Attempt[], ask: (c: Candidate) => Promise<UpstreamReply>, gone: StopSignal) => Promise<{ answer: Body; c: Candidate } | undefined>;

/**
 * `POST /v1/embeddings` through the providers of its `model`, then of each `models` fallback, as chat's
 * (the fake embedding models among them): an id that names no embedding model here is passed over and
 * named, as a failed provider is. Usage priced and charged; `router_metadata` when the caller opted in,
 * on the answer and on the 502 when every candidate failed.
 */
export async function embedThrough(ctx: Ctx, body: Body, catalog: Catalog, estimates: Estimates, firstWhole: FirstWhole): Promise<void> {
  if (body.input === undefined || body.input === null) throw new HttpError(400, 'input is required', 'invalid_request');
  const passed: Attempt[] = [];
  const candidates = candidatesFor(body, catalog, undefined, 'embedding', passed).filter((c) => c.adapter.embeddings);
  if (!candidates.length) throw noEndpoints(body, catalog, 'embedding', (c) => !!c.adapter.embeddings);
  const asked: Asked = { startedAt: ctx.store.now(), user: body.user, sessionId: ctx.sessionId(body) };
  if (asked.sessionId && asked.sessionId.length > 256) throw new HttpError(400, 'session_id must be at most 256 characters', 'invalid_request');
  const charge = gatewayCredits(ctx, body, '/v1/embeddings', candidates, estimates);
  const gone = callerGone(ctx);
  const metadataOf = metadataFor(ctx.wantsRouterMetadata(), body, candidates, passed, 'embeddings');
  charge.readsWhole();
  try {
    const got = await firstWhole(candidates, passed, (c) => faulted(ctx.fault, c) ?? c.adapter.embeddings!({ body: upstreamBody(body, c, false), stream: false, signal: readToEnd(gone), via: gatewaysBefore(ctx.req.headers.via) }), gone);
    if (!got) {
      if (gone.aborted) return;
      throw allFailed(passed, metadataOf?.(undefined)());
    }
    if (metadataOf) Object.assign(got.answer, metadataOf(got.c)());
    deliverWhole(ctx, got.c, asked, charge, gone, got.answer, priceUsage(embeddingsUsage(got.answer, body.input), got.c), 'embeddings');
  } finally {
    charge.release();
  }
}

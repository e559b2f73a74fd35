import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { gatewaysBefore } from '../http/loop-guard.js';
import { balanceLeft, chargeable, drainOrClose, holdEstimate, keyLimitLeft } from '../state/billing.js';
import { round } from '../models/models.js';
import { ProviderFailure } from '../providers/types.js';
import { faulted } from './provider-fault.js';
import { candidatesFor, type Candidate, type Catalog } from './candidates.js';
import { allFailed, metadataFor, noEndpoints, passOver, type Attempt } from './metadata.js';
import { upstreamBody } from './upstream-body.js';
import { metadataHeaders } from './routed.js';
import { callerGone } from './caller-gone.js';
import { keepUpstreamAnswer, servedBy, type Asked } from './kept.js';
import { chargeUpToBalance } from './gateway-credits.js';
import { genId } from '../resources/chat.js';
import { refusalOf, wholeAnswer } from './answer-shape.js';
import { speechFormat, speechType, type SpeechFormat } from './speech-format.js';

type Body = Record<string, unknown>;

/** The characters a speech request asks to be voiced: its input, or its turns' text. */
function inputChars(input: unknown): number {
  if (typeof input === 'string') return input.length;
  if (!Array.isArray(input)) return 0;
  return input.reduce((n: number, turn) => n + (typeof (turn as Body | null)?.text === 'string' ? ((turn as Body).text as string).length : 0), 0);
}

/**
 * `POST /v1/audio/speech` through the providers that serve the model, then those of each `models`
 * fallback (upstreams, or the fake models: providers/local.ts), in turn: one that refuses, times
 * out, answers 429/5xx or breaks before its first byte of audio is passed over. The audio is relayed as
 * it comes; a break after that cuts the caller's connection (audio has no error event). An answer is
 * charged its input's characters at the `prompt` price (the provider's, else the model's listed one):
 * whole, or cut after audio was written by a caller who hangs up (kept `cancelled`) or by the upstream
 * breaking (kept with finish_reason `error`), as the provider was asked to voice all of it and which
 * characters the bytes voice cannot be told; a hang-up before any audio is free. Kept for `GET /v1/generation` under the id sent in
 * `x-generation-id` (audio has no body to carry one), as the routing metadata a caller opts in to is sent in headers.
 */
/** What a speech answer of this candidate costs: its input's characters at the `prompt` price (the provider's, else the model's listed one). */
const speechCost = (body: Body, c: Candidate): number => round(inputChars(body.input) * ((c.model.prices ?? c.listed)?.prompt ?? 0));

/**
 * Speech's cost is known before it is asked (its characters): held in memory while it runs, as an
 * unbounded request's estimate is (billing.ts holdEstimate; at most what is left), so a burst cannot
 * spend past the balance or the key's limit together; still charged up to what is left, as before.
 * The candidates: the request's `model`, then its `models` fallbacks, upstream or fake, as chat's.
 */
export async function speakThrough(ctx: Ctx, body: Body, catalog: Catalog, hide: (text: string) => string): Promise<void> {
  const asked: Asked = { startedAt: ctx.store.now(), user: body.user, sessionId: ctx.sessionId(body) };
  const format = speechFormat(body);
  const passed: Attempt[] = [];
  const candidates = candidatesFor(body, catalog, undefined, 'speech', passed).filter((c) => c.adapter.speech);
  if (!candidates.length) throw noEndpoints(body, catalog, 'speech', (c) => !!c.adapter.speech);
  chargeable(ctx);
  const hold = Math.max(0, Math.min(Math.max(...candidates.map((c) => speechCost(body, c))), balanceLeft(ctx), keyLimitLeft(ctx) ?? Infinity));
  const held = hold > 0 ? holdEstimate(ctx, hold) : undefined;
  const release = () => held?.release();
  const metadataOf = metadataFor(ctx.wantsRouterMetadata(), body, candidates, passed, 'speech');
  try {
    await relaySpeech(ctx, body, candidates, { asked, format, hide, release, passed, metadataOf });
  } finally {
    release();
  }
}

interface SpeechRelay {
  asked: Asked;
  /** The format asked (the spec's default, pcm, when none was): the answer is labelled as it. */
  format: SpeechFormat;
  hide: (text: string) => string;
  /** Gives back what the request holds while in flight, called before its charge. */
  release: () => void;
  /** The attempts passed over so far (an id of `models` that names no model, already). */
  passed: Attempt[];
  metadataOf: ReturnType<typeof metadataFor>;
}

async function relaySpeech(ctx: Ctx, body: Body, candidates: Candidate[], { asked, format, hide, release, passed, metadataOf }: SpeechRelay): Promise<void> {
  const gone = callerGone(ctx);
  for (const c of candidates) {
    let first: IteratorResult<Buffer>;
    let rest: AsyncIterator<Buffer>;
    let headers: Record<string, string>;
    try {
      // Speech's end-user identifier is for logging only, never the provider's (spec).
      const reply = await (faulted(ctx.fault, c) ?? c.adapter.speech!({ body: { ...upstreamBody(body, c, false), user: undefined }, stream: false, signal: gone, via: gatewaysBefore(ctx.req.headers.via) }));
      if (reply.status < 200 || reply.status >= 300) {
        // The caller's own mistake (a 400): no other provider would differ.
        let text = '';
        for await (const piece of reply.audio) text += piece.toString('utf8');
        let message = `HTTP ${reply.status}`;
        try {
          message = refusalOf(wholeAnswer(text, reply.status, 'data'), reply.status);
        } catch {
          // not JSON: the status says it
        }
        throw new HttpError(reply.status, hide(`${c.slug}: ${message}`));
      }
      headers = reply.headers;
      rest = reply.audio[Symbol.asyncIterator]();
      first = await rest.next();
      if (first.done) throw new ProviderFailure('broken', `${c.slug}: no audio`);
    } catch (err) {
      if (gone.aborted) return;
      passOver(err, c, passed, hide);
      continue;
    }
    const res = ctx.res;
    const id = (ctx.generation = genId());
    ctx.servedBy = servedBy(c);
    ctx.head(200, { 'content-type': speechType(format, headers['content-type']), 'transfer-encoding': 'chunked', 'x-generation-id': id, ...metadataHeaders(metadataOf?.(c)()) });
    let wrote = false;
    let broken = false;
    try {
      for (let piece: IteratorResult<Buffer> = first; !piece.done && !gone.aborted; piece = await rest.next()) {
        if (!res.write(piece.value) && !res.destroyed) await drainOrClose(res);
        wrote = true;
      }
    } catch {
      broken = !gone.aborted;
    }
    // Left unread at the hang-up: let go (its upstream, and a recording's partial file, end now).
    if (gone.aborted && !broken) void rest.return?.(undefined).catch(() => {});
    if (gone.aborted && !wrote) return;
    const cost = speechCost(body, c);
    release();
    // The generation says what was charged (at most what was left of the balance), as chat's does.
    keepUpstreamAnswer(ctx, c, asked, 'tts', { id, cost: chargeUpToBalance(ctx, cost), streamed: true, cancelled: gone.aborted, finish: broken ? 'error' : undefined });
    // Broken after the first bytes: the caller's connection is cut, never a clean end.
    if (broken) res.destroy();
    else if (!gone.aborted) res.end();
    return;
  }
  throw allFailed(passed, metadataOf?.(undefined)());
}

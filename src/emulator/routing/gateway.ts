import { gatewaysBefore, viaName } from '../http/loop-guard.js';
import { HttpError, type Ctx } from '../http/http.js';
import type { FaultRule } from '../http/faults.js';
import { validateChat } from '../resources/chat.js';
import { listedModel } from '../resources/model-list.js';
import { MODELS } from '../models/models.js';
import { takenByAny } from '../models/parameters.js';
import { DEFAULT_BATCH_CONCURRENCY, type GatewayConfig } from '../providers/config.js';
import { LocalModels } from '../providers/local.js';
import { OpenAICompatible } from '../providers/openai-compatible.js';
import { hiddenKey, keyFormList, maskAnswer, TextScrub, type KeyForm } from '../providers/text-scrub.js';
import { CassetteDeck, type CassetteMode } from '../providers/cassette.js';
import type { ProviderAdapter, StopSignal, UpstreamReply } from '../providers/types.js';
import { candidatesFor, modelChain, type Candidate, type Catalog } from './candidates.js';
import { allFailed, keyHider, metadataFor, noEndpoints, passOver, type Attempt } from './metadata.js';
import { relayStream, streamOf } from './relay.js';
import { settled } from './relay-settled.js';
import { callerGone } from './caller-gone.js';
import { Sessions } from './sessions.js';
import { priceAnswer } from './usage.js';
import { BATCHED, batchBound, batchCandidates } from './batch-bound.js';
import { completeThrough } from './batch-through.js';
import { faulted } from './provider-fault.js';
import { Estimates, gatewayCredits } from './gateway-credits.js';
import { promptCount } from './hang-up.js';
import { relayResponses, responseStreamOf, wholeResponse } from './responses.js';
import { responsesCandidates } from './responses-candidates.js';
import { speakThrough } from './speech.js';
import { embedThrough } from './embed.js';
import { upstreamBody } from './upstream-body.js';
import { refusalOf, wholeAnswer } from './answer-shape.js';
import { answeredCause } from '../providers/upstream-cause.js';
import { answerText, finishOf, keepUpstreamAnswer, responseFinish, responseText, type Asked, type UpstreamAnswer } from './kept.js';
import { deliverWhole, readToEnd } from './whole-reply.js';
import { Measures, Timing } from './measures.js';
type Body = Record<string, unknown>;
export interface GatewayOptions {
  config: GatewayConfig;
  now: () => number;
  /** `timing`: the recorded waits on replay scaled (1 as recorded, the default; 0 none). */
  cassettes?: { dir: string; mode: CassetteMode; timing?: number };
}

/** `router serve --providers`: chat requests for upstream models routed at run time, with fallback. */
export class Gateway {
  private readonly catalog: Catalog;
  private readonly upstreamIds: Set<string>;
  private readonly embeddingIds: Set<string>;
  private readonly responsesIds: Set<string>;
  /** Every upstream model's id, of any kind: a request naming one is the gateway's, so a wrong kind is said as such. */
  private readonly anyIds: Set<string>;
  private readonly sessions = new Sessions();
  private readonly closers: (() => Promise<void>)[] = [];
  private readonly deck: CassetteDeck | undefined;
  readonly batchConcurrency: number;
  readonly via = viaName(); // its name in the Via header of what it sends upstream (http/loop-guard.ts)
  /** An upstream's words as the caller gets them: without any provider key the upstream echoed. */
  private readonly hide: (text: string) => string;
  private readonly streamForms: KeyForm[]; // the provider keys in each form they are hidden in (keyForms), with their open starts

  // `estimates`: what unbounded requests hold while in flight, in the store's table (saved with its state).
  constructor(opts: GatewayOptions & { estimates?: Map<string, number> }, private readonly estimates = new Estimates(opts.estimates)) {
    const keys = opts.config.providers.map((p) => p.apiKey).filter(hiddenKey);
    this.hide = keyHider((this.streamForms = keyFormList(keys)));
    this.batchConcurrency = opts.config.batchConcurrency ?? DEFAULT_BATCH_CONCURRENCY;
    const deck = (this.deck = opts.cassettes && new CassetteDeck(opts.cassettes.dir, opts.cassettes.mode, opts.cassettes.timing, opts.config.providers));
    if (deck) this.closers.push(() => (deck.stop(), deck.flush()));
    const upstreams: ProviderAdapter[] = opts.config.providers.map((p) => {
      const live = new OpenAICompatible(p, keys, this.via);
      this.closers.push(() => live.close());
      return deck ? deck.wrap(live) : live;
    });
    this.catalog = { upstreams, local: opts.config.localModels ? new LocalModels(opts.now) : undefined, measures: new Measures() };
    this.upstreamIds = new Set(upstreams.flatMap((a) => a.models().filter((m) => m.kind !== 'embedding').map((m) => m.id)));
    this.embeddingIds = new Set(upstreams.flatMap((a) => a.models().filter((m) => m.kind === 'embedding').map((m) => m.id)));
    this.responsesIds = new Set(upstreams.filter((a) => a.responses).flatMap((a) => a.models().filter((m) => (m.kind ?? 'chat') === 'chat').map((m) => m.id)));
    this.anyIds = new Set(upstreams.flatMap((a) => a.models().map((m) => m.id)));
  }

  /** Whether a chat request is the gateway's: it names an upstream model, or the fake models are off. */
  takes(body: Body): boolean {
    return !this.catalog.local || this.namesUpstream(body);
  }

  shown(provider: string, model: string) {
    return this.catalog.measures!.shown(provider, model);
  }

  /** The model list: the fake models (unless turned off), then each upstream model once. */
  listing(): Record<string, unknown>[] {
    const local = this.catalog.local ? MODELS.filter((m) => !this.upstreamIds.has(m.id) && !this.embeddingIds.has(m.id)).map(listedModel) : [];
    const seen = new Set<string>();
    const upstream = this.catalog.upstreams.flatMap((a) =>
      a.models().filter((m) => !seen.has(m.id) && seen.add(m.id)).map((m) => {
        const providers = this.catalog.upstreams.filter((u) => u.models().some((x) => x.id === m.id)).map((u) => u.name);
        const served = this.catalog.upstreams.flatMap((u) => u.models()).filter((x) => x.id === m.id), prices = served.find((x) => x.prices)?.prices; // as candidates.ts lists it
        return listedModel({ id: m.id, kind: m.kind ?? 'chat', providers, promptPrice: prices?.prompt ?? 0, completionPrice: prices?.completion ?? 0, maxOutputTokens: m.maxCompletionTokens, parameters: takenByAny(served), listing: { description: `${m.kind ?? 'chat'} model served by ${providers.join(', ')}` } });
      }),
    );
    return [...local, ...upstream];
  }

  async chat(ctx: Ctx, body: Body): Promise<void> {
    validateChat(body);
    const session = ctx.sessionId(body);
    const stream = body.stream === true;
    const asked: Asked = { startedAt: ctx.store.now(), user: body.user, sessionId: session, keepsContent: true };
    const sticky = session === undefined ? undefined : (id: string) => this.sessions.get(`${ctx.workspace}\n${session}\n${id}`);
    const passed: Attempt[] = [];
    const candidates = candidatesFor(body, this.catalog, sticky, 'chat', passed);
    if (!candidates.length) throw noEndpoints(body, this.catalog, 'chat');
    const charge = gatewayCredits(ctx, body, '/v1/chat/completions', candidates, this.estimates);
    const gone = callerGone(ctx);
    if (!stream) charge.readsWhole();
    const metadataOf = metadataFor(ctx.wantsRouterMetadata(), body, candidates, passed, 'chat');
    try {
      for (const c of candidates) {
        // Gone before this provider is asked: nothing is sent, nothing charged (the hold given back below).
        if (gone.aborted) return;
        const metadata = metadataOf?.(c);
        const timing = this.timing(c);
        let reply;
        try {
          reply = await (faulted(ctx.fault, c) ?? c.adapter.chat({ body: upstreamBody(body, c, stream), stream, signal: stream ? gone : readToEnd(gone), via: gatewaysBefore(ctx.req.headers.via) }));
        } catch (err) {
          // The caller hung up: no other provider is asked (nor, above, after a held stream: a fake model hears no abort).
          if (gone.aborted) return timing.end();
          passOver(err, c, passed, this.hide);
          timing.failed();
          continue;
        }
        const remember = () => session !== undefined && this.sessions.set(`${ctx.workspace}\n${session}\n${c.model.id}`, c.slug);
        let streamed = reply.kind === 'stream' ? reply : undefined;
        if (reply.kind === 'json') {
          const answer = this.answerOf(reply, c, passed, timing);
          if (!answer) continue;
          // An upstream that answered a stream request whole: the caller still gets the stream it asked for.
          if (stream) streamed = streamOf(answer);
          else {
            const cost = priceAnswer(answer, c, body);
            if (metadata) Object.assign(answer, metadata());
            remember();
            return deliverWhole(ctx, c, asked, charge, gone, answer, cost, 'completions', { finish: finishOf(answer), text: answerText(answer), tier: answer.service_tier });
          }
        }
        const kept = (o: Omit<UpstreamAnswer, 'streamed'>) => keepUpstreamAnswer(ctx, c, asked, 'completions', { ...o, cost: charge.charged ?? o.cost, streamed: true });
        const outcome = await relayStream(ctx, streamed!, c, { metadata, charge, hide: this.hide, promptTokens: () => promptCount(body), scrub: this.streamForms.length ? new TextScrub(this.streamForms) : undefined, first: reply.kind === 'stream' ? timing.first : undefined });
        if (reply.kind === 'stream') timing.relayed(outcome);
        if (settled(outcome, streamed!, c, passed, remember, kept, this.hide)) return;
      }
      throw allFailed(passed, metadataOf?.(undefined)());
    } finally {
      if (!stream) charge.release();
    }
  }

  /** The first whole answer of the candidates, each asked in turn; the ones that failed are added to `passed`. */
  private async firstWhole(candidates: Candidate[], passed: Attempt[], ask: (c: Candidate) => Promise<UpstreamReply>, named = true, gone?: StopSignal): Promise<{ answer: Body; c: Candidate } | undefined> {
    for (const c of candidates) {
      if (gone?.aborted) return undefined;
      let reply: UpstreamReply;
      const timing = this.timing(c);
      try {
        reply = await ask(c);
      } catch (err) {
        passOver(err, c, passed, this.hide);
        timing.failed();
        continue;
      }
      const answer = reply.kind === 'json' ? this.answerOf(reply, c, passed, timing, named) : undefined;
      if (answer) return { answer, c };
    }
    return undefined;
  }

  /** An attempt's clock (measures.ts), its end added to what the gateway measured of the provider. */
  private timing(c: Candidate): Timing {
    return new Timing(this.catalog.measures!, c.slug, c.model.id);
  }

  /** A whole answer, its time measured (`timing`); undefined, and the candidate passed over, when it is no answer. */
  private answerOf(reply: Extract<UpstreamReply, { kind: 'json' }>, c: Candidate, passed: Attempt[], timing: Timing, named = true): Body | undefined {
    let answer: Body;
    try {
      answer = maskAnswer(wholeAnswer(reply.text, reply.status, c.model.kind === 'embedding' ? 'data' : named ? 'choices' : 'output'), this.streamForms);
    } catch (err) {
      passed.push({ provider: c.slug, model: c.model.id, error: this.hide(`${c.slug}: ${(err as Error).message}`), cause: answeredCause(reply.status, reply.text) });
      return void timing.failed();
    }
    if (reply.status < 200 || reply.status >= 300) {
      timing.end();
      // The upstream refused the request itself (a 400): the caller's to fix, no other provider would differ.
      throw new HttpError(reply.status, this.hide(`${c.slug}: ${refusalOf(answer, reply.status)}`));
    }
    if (answer.model !== undefined) answer.model = c.model.id;
    if (named) answer.provider = c.slug;
    timing.whole(answer.usage);
    return answer;
  }

  /** Whether an embeddings request is the gateway's: its `model` or a `models` fallback is an upstream model. */
  takesEmbeddings(body: Body): boolean {
    return this.namesUpstream(body);
  }
  /** `POST /v1/embeddings` for an upstream model (routing/embed.ts). */
  embed(ctx: Ctx, body: Body): Promise<void> {
    return embedThrough(ctx, body, this.catalog, this.estimates, (candidates, passed, ask, gone) => this.firstWhole(candidates, passed, ask, true, gone));
  }

  /** Whether a Responses request is the gateway's: it names an upstream model (a chat one without `responses: true` is passed over). */
  takesResponses(body: Body): boolean {
    return this.namesUpstream(body);
  }
  /** `POST /v1/responses` through the upstreams that have it, streamed or not, in turn as chat's. */
  async respond(ctx: Ctx, body: Body): Promise<void> {
    const session = ctx.sessionId(body);
    const asked: Asked = { startedAt: ctx.store.now(), user: body.safety_identifier ?? body.user, sessionId: session, keepsContent: true };
    const stream = body.stream === true;
    const sticky = session === undefined ? undefined : (id: string) => this.sessions.get(`${ctx.workspace}\n${session}\n${id}`);
    const passed: Attempt[] = [];
    const candidates = responsesCandidates(body, this.catalog, sticky, passed);
    const charge = gatewayCredits(ctx, body, '/v1/responses', candidates, this.estimates);
    const gone = callerGone(ctx);
    if (!stream) charge.readsWhole();
    const metadataOf = metadataFor(ctx.wantsRouterMetadata(), body, candidates, passed, 'responses');
    try {
      for (const c of candidates) {
        if (gone.aborted) return;
        const metadata = metadataOf?.(c);
        const timing = this.timing(c);
        let reply: UpstreamReply;
        try {
          reply = await (faulted(ctx.fault, c) ?? c.adapter.responses!({ body: upstreamBody(body, c, false), stream, signal: stream ? gone : readToEnd(gone), via: gatewaysBefore(ctx.req.headers.via) }));
        } catch (err) {
          if (gone.aborted) return timing.end();
          passOver(err, c, passed, this.hide);
          timing.failed();
          continue;
        }
        const remember = () => session !== undefined && this.sessions.set(`${ctx.workspace}\n${session}\n${c.model.id}`, c.slug);
        let streamed = reply.kind === 'stream' ? reply : undefined;
        if (reply.kind === 'json') {
          const answer = this.answerOf(reply, c, passed, timing, false);
          if (!answer) continue;
          // An upstream that answered a stream request whole: the caller still gets the stream it asked for (as chat's).
          if (stream) streamed = responseStreamOf(answer);
          else {
            remember();
            const cost = wholeResponse(answer, c, body);
            if (metadata) Object.assign(answer, metadata());
            return deliverWhole(ctx, c, asked, charge, gone, answer, cost, 'completions', { finish: responseFinish(answer.status), text: responseText(answer), tier: answer.service_tier });
          }
        }
        const kept = (o: Omit<UpstreamAnswer, 'streamed'>) => keepUpstreamAnswer(ctx, c, asked, 'completions', { ...o, cost: charge.charged ?? o.cost, finish: responseFinish(o.finish), streamed: true });
        const outcome = await relayResponses(ctx, streamed!, c, { charge, promptTokens: () => promptCount(body), hide: this.hide, metadata, asked: body, scrub: this.streamForms.length ? new TextScrub(this.streamForms) : undefined, first: reply.kind === 'stream' ? timing.first : undefined });
        if (reply.kind === 'stream') timing.relayed(outcome);
        if (settled(outcome, streamed!, c, passed, remember, kept, this.hide)) return;
      }
      throw allFailed(passed, metadataOf?.(undefined)());
    } finally {
      if (!stream) charge.release();
    }
  }

  /** Whether a speech request is the gateway's: its `model` or a `models` fallback is an upstream model. */
  takesSpeech(body: Body): boolean {
    return this.namesUpstream(body);
  }

  /** Whether `model` or a `models` fallback names an upstream model of any kind: an id of another kind is then
   *  passed over (or the 400) in words naming its kind and route, where the fake models would call it no model. */
  private namesUpstream(body: Body): boolean {
    return modelChain(body).some((id) => this.anyIds.has(id));
  }

  speak(ctx: Ctx, body: Body): Promise<void> {
    return speakThrough(ctx, body, this.catalog, this.hide);
  }

  /** Whether a batch of `endpoint` for this model runs here (its requests through complete()). */
  serves(model: string, endpoint = '/v1/chat/completions'): boolean {
    return !!BATCHED[endpoint] && this[BATCHED[endpoint].ids].has(model);
  }

  /** One request of a batch (chat, embeddings or Responses), not streamed, over the providers (routing/batch-through.ts). */
  complete(body: Body, endpoint = '/v1/chat/completions', served: { provider?: string } = {}, fault?: FaultRule): Promise<Body> {
    return completeThrough(body, endpoint, served, this.catalog, (candidates, passed, ask, named) => this.firstWhole(candidates, passed, ask, named), this.deck, fault);
  }

  /** The most a batch request can cost at full price, held before it is sent (undefined: no bound; routing/batch-bound.ts). */
  bound(body: Body, endpoint = '/v1/chat/completions'): number | undefined {
    return batchBound(body, endpoint, batchCandidates(body, endpoint, this.catalog).candidates);
  }
  async close(): Promise<void> {
    await Promise.all(this.closers.map((close) => close()));
  }
}

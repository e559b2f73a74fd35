import { HttpError } from '../http/http.js';
import { MODELS, piecesOf } from '../models/models.js';
import { chatCompletionText, chatUsage, genId, planChat } from '../resources/chat.js';
import { richDeltas } from '../models/rich-chat.js';
import { planResponses, responseEvents } from '../resources/responses.js';
import { audioOf, planSpeech } from '../resources/speech.js';
import { planEmbeddings } from '../resources/embeddings.js';
import { Serialized } from '../http/serialized.js';
import type { AudioReply, ProviderAdapter, ProviderModel, UpstreamChat, UpstreamReply } from './types.js';
import { ProviderFailure } from './types.js';

type Body = Record<string, unknown>;

/**
 * The emulator's fake models as a provider, for a gateway whose route falls back from an upstream to
 * them (or the other way). A request for fake models only never comes here: chat.ts answers it as always.
 * The gateway names the fake provider slug (local-alpha, local-beta) in `provider.only`.
 */
export class LocalModels implements ProviderAdapter {
  readonly name = 'local';

  constructor(private readonly now: () => number) {}

  models(): ProviderModel[] {
    return MODELS.filter((m) => m.kind === 'chat').map((m) => ({ id: m.id, upstream: m.id }));
  }

  /** The fake provider slugs that serve a model of this kind. */
  slugs(id: string, kind: 'chat' | 'speech' | 'embedding' = 'chat'): string[] {
    return MODELS.find((m) => m.id === id && m.kind === kind)?.providers ?? [];
  }

  async chat({ body, stream }: UpstreamChat): Promise<UpstreamReply> {
    const plan = planned(body, planChat);
    const created = Math.floor(this.now() / 1000);
    const headers = { 'content-type': stream ? 'text/event-stream' : 'application/json' };
    if (!stream) return { kind: 'json', status: 200, headers, text: chatCompletionText(body, plan, created) };
    const base = { id: genId(), object: 'chat.completion.chunk', created, model: plan.routed.model.id, provider: plan.routed.provider };
    const finish = plan.rich?.finishReason ?? plan.gen.finishReason;
    const chunk = (delta: Body, finishReason: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason, native_finish_reason: finishReason, logprobs: null }] });
    async function* events(): AsyncGenerator<string> {
      if (plan.rich) for (const delta of richDeltas(plan.rich)) yield chunk(delta);
      else for (const part of piecesOf(plan.gen)) yield chunk({ role: 'assistant', content: part });
      yield chunk({ role: 'assistant', content: '' }, finish);
      yield JSON.stringify({ ...base, choices: [], usage: chatUsage(plan) });
      yield '[DONE]';
    }
    return { kind: 'stream', status: 200, headers, events: events() };
  }

  /** `POST /v1/responses` of a fake model, whole or as its stream's events (resources/responses.ts makes both). */
  async responses({ body, stream }: UpstreamChat): Promise<UpstreamReply> {
    const plan = planned(body, (b) => planResponses(b, Math.floor(this.now() / 1000), { stream }));
    if (!stream) return { kind: 'json', status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify(plan.result) };
    const { events } = responseEvents(plan);
    async function* texts(): AsyncGenerator<string> {
      for (const e of events) yield e instanceof Serialized ? e.json : JSON.stringify(e);
    }
    return { kind: 'stream', status: 200, headers: { 'content-type': 'text/event-stream' }, events: texts() };
  }

  /** `POST /v1/embeddings` of a fake embedding model: its vectors as resources/embeddings.ts makes them. */
  async embeddings({ body }: UpstreamChat): Promise<UpstreamReply> {
    const { response } = await planEmbeddings(body);
    return { kind: 'json', status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify(response) };
  }

  /** `POST /v1/audio/speech` of a fake speech model: its audio a word at a time, as resources/speech.ts voices it. */
  async speech({ body }: UpstreamChat): Promise<AudioReply> {
    const plan = planSpeech(body);
    async function* audio(): AsyncGenerator<Buffer> {
      for await (const [piece] of audioOf(plan)) yield Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    }
    return { status: 200, headers: { 'content-type': plan.format === 'mp3' ? 'audio/mpeg' : 'audio/pcm' }, audio: audio() };
  }
}

/** A fake model's plan; one marked unavailable (the plan's 502) is a provider failure, passed over for the next candidate. */
function planned<T>(body: Body, plan: (body: Body) => T): T {
  try {
    return plan(body);
  } catch (err) {
    if (err instanceof HttpError && err.status === 502) throw new ProviderFailure('unavailable', `${String(body.model)}: unavailable`, 502);
    throw err;
  }
}

import { HttpError } from '../http/http.js';
import { MODELS, piecesOf } from '../models/models.js';
import { chatCompletionText, chatUsage, genId, planChat } from '../resources/chat.js';
import { richDeltas } from '../models/rich-chat.js';
import type { ProviderAdapter, ProviderModel, UpstreamChat, UpstreamReply } from './types.js';
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

  /** The fake provider slugs that serve a model. */
  slugs(id: string): string[] {
    return MODELS.find((m) => m.id === id && m.kind === 'chat')?.providers ?? [];
  }

  async chat({ body, stream }: UpstreamChat): Promise<UpstreamReply> {
    let plan: ReturnType<typeof planChat>;
    try {
      plan = planChat(body);
    } catch (err) {
      if (err instanceof HttpError && err.status === 502) throw new ProviderFailure('unavailable', `${String(body.model)}: unavailable`, 502);
      throw err;
    }
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
}

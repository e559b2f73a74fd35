import type { Ctx } from '../http/http.js';
import { Serialized } from '../http/serialized.js';
import type { ModelSpec } from '../models/models.js';
import { IMAGE_TOKENS } from '../models/rich-chat.js';
import { hangUpCost, RelayedTokens, stringMember } from '../routing/hang-up.js';
import { holdUntilSettled, type StreamProgress } from '../state/billing.js';

type Body = Record<string, unknown>;

/** Feeds the content an event carries (text, tool arguments, an image) to `tokens`, as it is framed. */
export type EventTokens = (event: unknown, tokens: RelayedTokens) => void;

export interface StreamBill {
  /** For writeSSE (or a writer of its own): what was written, and whether the caller hung up. */
  progress: StreamProgress;
  /** Counts the content of what was written, for a writer of its own. */
  tokens: RelayedTokens;
  /** The stream was delivered whole: its hold is its charge (call just before its end is written). */
  paid(): void;
  /**
   * The stream ended before its end: settles the hold at what the caller owes. After content, the
   * content written (at most the whole answer's), what it was charged, and whether the caller hung up
   * (a cancelled generation) or a fault cut it (a generation that ended in error). Events written
   * without content (a Responses stream's `response.created`) carried the id: the hold is given back
   * whole and the generation kept all the same, at no cost, so the caller's id is known to the
   * service; with nothing written, the hold is given back whole and this is undefined.
   */
  cut(): { sent: number; cost: number; cancelled: boolean } | undefined;
}

/**
 * A fake model's stream, paid as a relayed one is (docs/gateway.md): its whole cost held before the
 * first event (402 when the balance does not cover it), charged just before its end is written. A
 * stream that ends early after content, the caller's hang-up or a fault's cut (as a provider's
 * stream broken mid-way is billed for what it generated), pays `owed(content written)`, the content
 * counted up to `most` (the whole answer's), never more than the hold (the rest given back); one
 * that ends before any content pays nothing (its generation kept when events went out).
 */
export async function streamBill(ctx: Ctx, cost: number, most: number, owed: (sent: number) => number, count?: EventTokens): Promise<StreamBill> {
  const held = holdUntilSettled(ctx, cost);
  const tokens = new RelayedTokens();
  const progress: StreamProgress = { sent: 0, hungUp: false, beforeEnd: () => held.settle(cost), written: () => tokens.written() };
  if (count) progress.count = (event) => count(event, tokens);
  return {
    progress,
    tokens,
    paid: () => held.settle(cost),
    cut() {
      const sent = Math.min(tokens.sent, most);
      const charged = sent > 0 ? Math.min(cost, owed(sent)) : 0;
      held.settle(charged);
      return sent > 0 || progress.sent > 0 ? { sent, cost: charged, cancelled: progress.hungUp } : undefined;
    },
  };
}

/** What a hang-up owes on a chat model: the prompt and the completion tokens written, at its prices. */
export const tokensOwed = (model: ModelSpec, promptTokens: number) => (sent: number) => hangUpCost({ prompt: model.promptPrice, completion: model.completionPrice }, promptTokens, sent);

/** A chat chunk's content: its text, reasoning, tool arguments and images (as fitRich counts them). */
export const chatEventTokens: EventTokens = (event, tokens) => {
  if (event instanceof Serialized) return tokens.add(stringMember(event.json, '"content":"'));
  const delta = ((event as Body).choices as Body[] | undefined)?.[0]?.delta as Body | undefined;
  if (!delta) return;
  if (typeof delta.reasoning === 'string') tokens.add(delta.reasoning);
  if (typeof delta.content === 'string') tokens.add(delta.content);
  for (const call of (delta.tool_calls as Body[] | undefined) ?? []) tokens.add(((call.function as Body | undefined)?.arguments as string | undefined) ?? '');
  if (Array.isArray(delta.images)) tokens.addTokens(IMAGE_TOKENS * delta.images.length);
};

/** A Responses event's content: text, reasoning and argument deltas, and each image once it is done. */
export const responsesEventTokens: EventTokens = (event, tokens) => {
  if (event instanceof Serialized) return tokens.add(stringMember(event.json, '"delta":"'));
  const e = event as Body;
  if (typeof e.delta === 'string') tokens.add(e.delta);
  else if (e.type === 'response.output_item.done' && (e.item as Body | undefined)?.type === 'image_generation_call') tokens.addTokens(IMAGE_TOKENS);
};

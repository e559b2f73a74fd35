import { countTokens, firstPieces, pieces, prng, seedOf, type Generation } from './models.js';
import type { RichMessage } from './rich-answer.js';

type Body = Record<string, unknown>;

/** The assistant message of a rich answer, every field the spec names for it. */
export function richMessage(rich: RichMessage): Body {
  return {
    role: 'assistant',
    content: rich.content,
    refusal: null,
    reasoning: rich.reasoning ?? null,
    ...(rich.reasoning_details ? { reasoning_details: rich.reasoning_details } : {}),
    ...(rich.tool_calls ? { tool_calls: rich.tool_calls } : {}),
    ...(rich.images ? { images: rich.images } : {}),
    ...(rich.annotations ? { annotations: rich.annotations } : {}),
  };
}

/** Tokens an image of an answer is billed for. */
export const IMAGE_TOKENS = 1000;

/**
 * A rich answer as a model gives it under a limit of `limit` completion tokens, and the tokens it
 * is billed for: its reasoning, images, text and tool arguments, in the order a model makes them.
 * Text is cut at the limit; an image, or the tool calls together, fit whole or are left out; a
 * cut answer finishes with "length", so its cost never passes what max_tokens bounds.
 */
export function fitRich(rich: RichMessage, limit = Infinity): { rich: RichMessage; tokens: number } {
  let used = 0;
  let cut = false;
  /** Takes `tokens` more when they fit whole. */
  const fits = (tokens: number): boolean => {
    if (!cut && used + tokens <= limit) used += tokens;
    else cut = true;
    return !cut;
  };
  /** The text, or what of it fits: the answer stops there. */
  const text = (t: string): string => {
    const stopped = cut;
    if (fits(countTokens(t))) return t;
    if (stopped || used >= limit) return '';
    const kept = firstPieces(t, limit - used);
    used += countTokens(kept);
    return kept;
  };
  const out: RichMessage = { ...rich };
  if (rich.reasoning !== undefined) {
    out.reasoning = text(rich.reasoning);
    if (cut) out.reasoning_details = rich.reasoning_details?.map((d) => (d.type === 'reasoning.summary' ? { ...d, summary: out.reasoning } : d));
  }
  if (rich.images) {
    out.images = rich.images.filter(() => fits(IMAGE_TOKENS));
    if (out.images.length === 0) delete out.images;
  }
  if (rich.content !== null) out.content = text(rich.content);
  if (rich.tool_calls && !fits(countTokens(rich.tool_calls.map((c) => c.function.arguments).join(' ')))) delete out.tool_calls;
  if (cut) {
    out.finishReason = 'length';
    const end = out.content?.length ?? 0;
    if (rich.annotations) out.annotations = rich.annotations.map((a) => ({ ...a, url_citation: { ...(a.url_citation as Body), end_index: Math.min(end, (a.url_citation as Body).end_index as number) } }));
  }
  return { rich: out, tokens: used };
}

/**
 * The rich answer `make` gives (from the plain answer `base`, read only if it needs it), fitted to
 * `limit`, and the generation its usage counts; undefined when the plain answer stands. A plain
 * text that generate() already cut keeps the answer cut.
 */
export function fitAnswer(make: (baseText: () => string) => RichMessage | undefined, base: Generation, limit: number): { rich: RichMessage; gen: Generation } | undefined {
  let baseCut = false;
  const asked = make(() => ((baseCut = base.finishReason === 'length'), base.text));
  if (!asked) return undefined;
  const { rich, tokens } = fitRich(baseCut ? { ...asked, finishReason: 'length' } : asked, limit);
  return { rich, gen: { text: rich.content ?? '', finishReason: rich.finishReason === 'length' ? 'length' : 'stop', promptTokens: base.promptTokens, completionTokens: tokens } };
}

/** completion_tokens_details of a rich answer: its reasoning and image tokens. */
export function completionDetails(rich: RichMessage) {
  return { reasoning_tokens: countTokens(rich.reasoning ?? ''), audio_tokens: 0, image_tokens: IMAGE_TOKENS * (rich.images?.length ?? 0) };
}

/** A string cut into fragments of 1 to 8 characters, as a provider streams tool arguments. */
export function fragments(text: string, seed: string): string[] {
  const rand = prng(seedOf('fragments', seed));
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(rand() * 8);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/**
 * The deltas of a rich answer, in the order a provider sends them: reasoning (with its summary
 * detail), text, each tool call (id and name first, then its arguments in fragments), images,
 * and the annotations with the last text.
 */
export function richDeltas(rich: RichMessage): Body[] {
  const deltas: Body[] = [];
  for (const piece of pieces(rich.reasoning ?? '')) {
    deltas.push({ role: 'assistant', content: '', reasoning: piece, reasoning_details: [{ type: 'reasoning.summary', summary: piece, format: 'unknown', index: 0 }] });
  }
  for (const piece of pieces(rich.content ?? '')) deltas.push({ role: 'assistant', content: piece });
  for (const call of rich.tool_calls ?? []) {
    deltas.push({ role: 'assistant', content: null, tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    for (const part of fragments(call.function.arguments, call.id)) deltas.push({ role: 'assistant', content: null, tool_calls: [{ index: call.index, function: { arguments: part } }] });
  }
  if (rich.images) deltas.push({ role: 'assistant', content: '', images: rich.images });
  if (rich.annotations) deltas.push({ role: 'assistant', content: '', annotations: rich.annotations });
  return deltas;
}

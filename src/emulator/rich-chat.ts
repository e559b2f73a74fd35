import { countTokens, pieces, prng, seedOf } from './models.js';
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

/** Tokens a rich answer is billed for: its text, reasoning and tool arguments, and 1,000 per image. */
export function richTokens(rich: RichMessage): number {
  const args = (rich.tool_calls ?? []).map((c) => c.function.arguments).join(' ');
  return countTokens(`${rich.content ?? ''} ${rich.reasoning ?? ''} ${args}`) + 1000 * (rich.images?.length ?? 0);
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

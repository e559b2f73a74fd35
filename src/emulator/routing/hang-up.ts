import { countTokens, round } from '../models/models.js';
import type { ProviderModel } from '../providers/types.js';
import { IMAGE_TOKENS } from '../models/rich-chat.js';

/** A word character of the tokenizer's ASCII (models.ts), for a word split across two relayed pieces. */
const wordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * Tokens of an answer's text as it is relayed, counted as the emulator counts (countTokens), a word
 * split across two events once. Counted when framed, `sent` once the frame was written to the caller.
 */
export class RelayedTokens {
  sent = 0;
  private pending = 0;
  private inWord = false;

  add(text: string): void {
    if (!text) return;
    let n = countTokens(text);
    if (this.inWord && wordChar(text.charCodeAt(0))) n--;
    this.pending += n;
    this.inWord = wordChar(text.charCodeAt(text.length - 1));
  }

  /** `n` tokens that are not text (an image), counted as framed. */
  addTokens(n: number): void {
    this.pending += n;
    this.inWord = false;
  }

  /** What was counted went out to the caller; returns all that did. */
  written(): number {
    this.sent += this.pending;
    this.pending = 0;
    return this.sent;
  }
}

/**
 * Feeds what a parsed chat chunk carries of the answer to `tokens`: its text, reasoning, tool
 * arguments and images, as a fake model's stream counts them (stream-bill.ts), for a caller who hangs
 * up after a tool call or reasoning and no text.
 */
export function chunkTokens(chunk: Body, tokens: RelayedTokens): void {
  const delta = (chunk.choices as Body[] | undefined)?.[0]?.delta as Body | undefined;
  if (!delta || typeof delta !== 'object') return;
  for (const text of [delta.reasoning, delta.reasoning_content, delta.content]) if (typeof text === 'string') tokens.add(text);
  if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Body[]) tokens.add(String((call?.function as Body | undefined)?.arguments ?? ''));
  if (Array.isArray(delta.images)) tokens.addTokens(IMAGE_TOKENS * delta.images.length);
}

const CONTENT = '"content":"';
/**
 * Whether a chunk's text may carry output other than `content`, for chunkTokens to read it parsed:
 * one without text (a tool call's, reasoning's, an image's: `"content":null`, `""` or none). One scan,
 * as the relay's fast path runs it on every chunk; reasoning beside text in one chunk is counted as text.
 */
export function moreThanContent(data: string): boolean {
  const at = data.indexOf(CONTENT);
  return at < 0 || data.charCodeAt(at + CONTENT.length) === 34; /* " */
}

/**
 * The text of a plain chat chunk's `"content":"…"` member, without parsing the chunk (its JSON
 * escapes undone only when it has any); '' when it has none.
 */
export const contentOf = (data: string): string => stringMember(data, '"content":"');

/** The text of the first string member an event's JSON opens with `marker` (`"name":"`), as contentOf. */
export function stringMember(data: string, marker: string): string {
  const at = data.indexOf(marker);
  if (at < 0) return '';
  const start = at + marker.length;
  return stringText(data, start, stringEnd(data, start));
}

/** Where a JSON string whose text starts at `start` ends: its closing quote, or -1 when it has none. */
export function stringEnd(data: string, start: number): number {
  for (let i = start; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) return i;
  }
  return -1;
}

/** A JSON string's text from `start` to `end` (stringEnd; -1: to the end), its escapes undone only when it has any. */
export function stringText(data: string, start: number, end: number): string {
  const raw = end < 0 ? data.slice(start) : data.slice(start, end);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return '';
  }
}

/** Tokens a chat template may add around the request's text (as the hold's bound counts them). */
const TEMPLATE_TOKENS = 16;

/** The request's prompt tokens as the hold's bound counts them: the UTF-8 bytes of the request as JSON. */
export const promptEstimate = (body: unknown): number => Buffer.byteLength(JSON.stringify(body)) + TEMPLATE_TOKENS;

type Body = Record<string, unknown>;

/** A message's or input item's text: a string, or its parts' `text` joined (as the emulator's models read it). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part && typeof (part as Body).text === 'string' ? ((part as Body).text as string) : '')).join('');
}

/**
 * The request's prompt tokens as a hang-up is charged them when the upstream's usage never came: its
 * text (a chat's messages; a Responses request's instructions and input) as `role: text` lines,
 * counted as the emulator's models count theirs (countTokens), so the same as an emulator upstream's
 * usage would say. The hold's bound (promptEstimate) counts each byte of the whole JSON a token: as
 * a charge, a hang-up after two chunks then cost 4.4 times the whole answer.
 */
export function promptCount(body: unknown): number {
  if (!body || typeof body !== 'object') return 0;
  const b = body as Body;
  const lines: string[] = [];
  if (typeof b.instructions === 'string') lines.push(`system: ${b.instructions}`);
  const items = Array.isArray(b.messages) ? b.messages : typeof b.input === 'string' ? [{ role: 'user', content: b.input }] : Array.isArray(b.input) ? b.input : [];
  for (const item of items as unknown[]) {
    if (item && typeof item === 'object') lines.push(`${String((item as Body).role ?? 'user')}: ${textOf((item as Body).content)}`);
  }
  return countTokens(lines.join('\n'));
}

/**
 * What a caller who hung up after `completion` tokens of content owes at `prices` (a candidate's, or
 * a fake model's): the prompt (the upstream's count if its usage came, else promptCount's) and those
 * tokens; 0 with no prices (nothing to price them at) or no content relayed.
 */
export function hangUpCost(prices: ProviderModel['prices'], promptTokens: number, completion: number): number {
  if (!prices || completion <= 0) return 0;
  const cost = round(round(promptTokens * prices.prompt) + round(completion * prices.completion));
  return Number.isFinite(cost) ? cost : 0;
}

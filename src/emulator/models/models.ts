import { createHash } from 'node:crypto';
import { cutAtStop } from './stop-sequences.js';

export type ModelKind = 'chat' | 'embedding' | 'speech' | 'decision';

export interface ModelSpec {
  id: string;
  kind: ModelKind;
  providers: string[];
  /** USD per prompt token (or per input character for speech). */
  promptPrice: number;
  /** USD per completion token. */
  completionPrice: number;
  /** Always fails upstream: for exercising `models` fallback. */
  unavailable?: boolean;
  /** The speeds a model with speed control takes (as OpenAI's TTS: 0.25 to 4). */
  speedRange?: [number, number];
  /** The most tokens one answer can hold (chat models): longer asks stop there with finish_reason "length". */
  maxOutputTokens?: number;
  dimensions?: number;
  voices?: string[];
  /** Input modalities beyond text (chat models): `image`, `file`, `audio`. Text only when absent. */
  input?: string[];
  /** Output modalities (chat models): text only when absent. */
  output?: string[];
  /** The request parameters it honours (chat models), when not what model-list.ts gives its kind: a gateway's upstream model's. */
  parameters?: string[];
  /** Fields of its `GET /v1/models` entry that differ from what model-list.ts derives (OpenAPI `Model` names). */
  listing?: Record<string, unknown>;
}

export const MODELS: ModelSpec[] = [
  { id: 'local/echo', kind: 'chat', providers: ['local-alpha', 'local-beta'], promptPrice: 1e-6, completionPrice: 2e-6, maxOutputTokens: 262_144 },
  { id: 'local/lorem', kind: 'chat', providers: ['local-alpha', 'local-beta'], promptPrice: 5e-7, completionPrice: 1.5e-6, maxOutputTokens: 262_144 },
  { id: 'local/unavailable', kind: 'chat', providers: ['local-beta'], promptPrice: 1e-6, completionPrice: 1e-6, unavailable: true },
  { id: 'local/embed', kind: 'embedding', providers: ['local-alpha'], promptPrice: 2e-8, completionPrice: 0, dimensions: 256 },
  { id: 'local/tts', kind: 'speech', providers: ['local-alpha'], promptPrice: 1.5e-5, completionPrice: 0, speedRange: [0.25, 4], voices: ['alloy', 'ember', 'sage'] },
  { id: 'local/tts-basic', kind: 'speech', providers: ['local-beta'], promptPrice: 1e-5, completionPrice: 0, voices: ['alloy', 'ember', 'sage'] },
  { id: 'local/vision', kind: 'chat', providers: ['local-alpha'], promptPrice: 1e-6, completionPrice: 2e-6, maxOutputTokens: 16_384, input: ['text', 'image', 'file', 'audio'] },
  { id: 'local/tools', kind: 'chat', providers: ['local-alpha'], promptPrice: 1e-6, completionPrice: 2e-6, maxOutputTokens: 16_384 },
  { id: 'local/thinker', kind: 'chat', providers: ['local-beta'], promptPrice: 2e-6, completionPrice: 4e-6, maxOutputTokens: 65_536 },
  { id: 'local/painter', kind: 'chat', providers: ['local-beta'], promptPrice: 2e-6, completionPrice: 3e-5, maxOutputTokens: 4_096, output: ['text', 'image'] },
  { id: 'local/judge', kind: 'decision', providers: ['local-alpha'], promptPrice: 3e-7, completionPrice: 1e-6 },
];

export const PROVIDERS = ['local-alpha', 'local-beta'];

export const MODEL_ID_PATTERN = /^[A-Za-z0-9._~-]+\/[A-Za-z0-9._~:-]+$/;

export function findModel(id: string): ModelSpec | undefined {
  return MODELS.find((m) => m.id === id);
}

/** A word character of the tokenizer. */
const WORD = '\\p{L}\\p{N}_';
/** Token pieces: a word with its leading space, or one punctuation mark with its leading space. */
const PIECE = new RegExp(`\\s*[${WORD}]+|\\s*[^\\s${WORD}]`, 'gu');

export function pieces(text: string): string[] {
  const out = text.match(PIECE) ?? [];
  const consumed = out.join('').length;
  if (consumed < text.length && out.length > 0) out[out.length - 1] += text.slice(consumed);
  return out;
}

/**
 * pieces(text).slice(0, n).join(''): the text up to the end of its nth piece, found without
 * cutting the rest (a 20 MB prompt echoed back is cut at the model's maximum, not split whole).
 */
export function firstPieces(text: string, n: number): string {
  const piece = new RegExp(PIECE.source, 'gu');
  let end = 0;
  for (let i = 0; i < n; i++) {
    if (!piece.exec(text)) return text;
    end = piece.lastIndex;
  }
  // The last piece also holds what follows it unmatched (trailing spaces), as in pieces().
  return piece.exec(text) ? text.slice(0, end) : text;
}

/** ASCII classes of PIECE: 1 a word character, 2 whitespace (JS \s), 0 anything else. */
const WORD_CHAR = new RegExp(`[${WORD}]`, 'u');
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, c) => (WORD_CHAR.test(String.fromCharCode(c)) ? 1 : /\s/.test(String.fromCharCode(c)) ? 2 : 0));

/** pieces(text).length, counted without building the pieces (every request counts its prompt). */
export function countTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) return pieces(text).length;
    const kind = ASCII_CLASS[c];
    if (kind === 1) {
      if (!inWord) count++;
      inWord = true;
    } else {
      inWord = false;
      if (kind === 0) count++;
    }
  }
  return count;
}

export function seedOf(...parts: unknown[]): number {
  const h = createHash('sha256').update(JSON.stringify(parts)).digest();
  return h.readUInt32LE(0);
}

/** mulberry32's step: its state moves by this much a draw, so n draws can be skipped at once. */
const STEP = 0x6d2b79f5;

function mulberryOutput(a: number): number {
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** Small fast deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => mulberryOutput((a = (a + STEP) >>> 0));
}

const WORDS = (
  'route model token signal river stone light quiet answer window garden paper number field ' +
  'simple bright careful music little winter green yellow travel morning steady open clear ' +
  'batch stream voice echo north south harbor engine lantern meadow silver copper orbit ' +
  'planet pattern thread candle forest summer ocean measure balance gentle rapid'
).split(' ');

/** Each word with the space before it, plain and capitalized: the pieces of lorem text, never built twice. */
const SPACED = WORDS.map((w) => ` ${w}`);
const SPACED_CAPITAL = WORDS.map((w) => ` ${w[0]!.toUpperCase()}${w.slice(1)}`);

/**
 * Deterministic prose, `words` words in sentences, the same for the same seed, as its token pieces
 * (what pieces() splits their joined text into), one at a time: a stream holds none of them.
 */
export function* loremPieces(seed: number, words: number): Generator<string> {
  const rand = prng(seed);
  let sentence = 0;
  let sentenceLength = 6 + Math.floor(rand() * 9);
  for (let i = 0; i < words; i++) {
    const k = Math.floor(rand() * WORDS.length);
    const w = sentence === 0 ? SPACED_CAPITAL[k]! : SPACED[k]!;
    yield i === 0 ? w.slice(1) : w;
    sentence++;
    if (sentence >= sentenceLength || i === words - 1) {
      yield '.';
      sentence = 0;
      sentenceLength = 6 + Math.floor(rand() * 9);
    }
  }
}

/** How many pieces loremPieces(seed, words) gives: a period a sentence, its words' draws skipped, no text. */
function loremCount(seed: number, words: number): number {
  let a = seed >>> 0;
  const sentenceLength = () => 6 + Math.floor(mulberryOutput((a = (a + STEP) >>> 0)) * 9);
  let count = words;
  for (let i = 0, length = sentenceLength(); i < words; length = sentenceLength()) {
    const taken = Math.min(length, words - i);
    a = (a + Math.imul(taken, STEP)) >>> 0;
    i += taken;
    count++;
  }
  return count;
}

function* firstOf<T>(items: Iterable<T>, n: number): Generator<T> {
  if (n <= 0) return;
  let i = 0;
  for (const item of items) {
    yield item;
    if (++i >= n) return;
  }
}

/** pieces(text), one at a time. */
function* eachPiece(text: string): Generator<string> {
  const piece = new RegExp(PIECE.source, 'gu');
  let last = piece.exec(text)?.[0];
  while (last !== undefined) {
    const end = piece.lastIndex;
    const next = piece.exec(text)?.[0];
    // The last piece also holds what follows it unmatched (trailing spaces), as in pieces().
    yield next === undefined ? last + text.slice(end) : last;
    last = next;
  }
}

export interface Generation {
  /** The whole answer (made on each read when `pieces` is set: a stream never needs it). */
  readonly text: string;
  /** pieces(text), made one at a time, when generating can give them without the text. */
  pieces?: () => Iterable<string>;
  finishReason: 'stop' | 'length';
  /** The stop sequence asked for that ended the text (finishReason "stop"). */
  stopSequence?: string;
  promptTokens: number;
  completionTokens: number;
}

/** The token pieces of a generation's text, one at a time. */
export function piecesOf(gen: Pick<Generation, 'text' | 'pieces'>): Iterable<string> {
  return gen.pieces ? gen.pieces() : eachPiece(gen.text);
}

/** The most tokens an answer may have: what was asked, and never past the model's own maximum, as a real model. */
export function outputLimit(model: ModelSpec, asked: number | undefined): number {
  return Math.min(asked ?? Infinity, model.maxOutputTokens ?? Infinity);
}

/**
 * What a local chat model answers. `local/echo` repeats the last user message;
 * `local/lorem` writes deterministic prose, as many words as "N words" (or "N more words") in the prompt asks
 * (else 24 to 63), both cut at `maxTokens`.
 */
export function generate(model: ModelSpec, promptText: string, lastUser: string, asked: { maxTokens?: number; seed?: unknown; stop?: string[] }): Generation {
  const limit = outputLimit(model, asked.maxTokens);
  const opts = { ...asked, maxTokens: Number.isFinite(limit) ? limit : undefined };
  const promptTokens = countTokens(promptText);
  let text: string;
  if (model.id === 'local/lorem') {
    const seed = seedOf(promptText, opts.seed ?? null);
    const wanted = /(\d{1,7})\s+(?:more\s+)?words?\b/i.exec(lastUser);
    const words = wanted ? Number(wanted[1]) : 24 + (seed % 40);
    // A word can be two pieces (word + period); generate enough, cut below.
    const made = opts.maxTokens !== undefined ? Math.min(words, opts.maxTokens) : words;
    if (!opts.stop?.some((s) => s)) {
      const all = loremCount(seed, made);
      const cut = opts.maxTokens !== undefined && all > opts.maxTokens;
      const count = cut ? opts.maxTokens! : all;
      const each = () => firstOf(loremPieces(seed, made), count);
      return {
        // Joined flat: a string built piece by piece is a tree of 262,144 nodes, ~4x the text.
        get text() {
          return [...each()].join('');
        },
        pieces: each,
        finishReason: cut ? 'length' : 'stop',
        promptTokens,
        completionTokens: count,
      };
    }
    text = [...loremPieces(seed, made)].join('');
  } else {
    text = lastUser;
  }
  let finishReason: Generation['finishReason'] = 'stop';
  let stopSequence: string | undefined;
  if (opts.stop?.length) ({ text, hit: stopSequence } = cutAtStop(text, opts.stop));
  if (opts.maxTokens !== undefined && countTokens(text) > opts.maxTokens) {
    text = firstPieces(text, opts.maxTokens);
    finishReason = 'length';
    stopSequence = undefined;
  }
  return { text, finishReason, promptTokens, completionTokens: countTokens(text), ...(stopSequence === undefined ? {} : { stopSequence }) };
}

export function costOf(model: ModelSpec, promptTokens: number, completionTokens: number) {
  const prompt = round(promptTokens * model.promptPrice);
  const completion = round(completionTokens * model.completionPrice);
  return { cost: round(prompt + completion), prompt, completion };
}

/** An amount of USD to 1e-10, the unit costs are made in, where a double holds it that finely (below about $900,000). */
export function round(n: number): number {
  const units = Math.round(n * 1e10);
  return Number.isSafeInteger(units) ? units / 1e10 : n;
}

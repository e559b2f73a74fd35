import type { Ctx } from '../http/http.js';
import { costOf, prng, seedOf, type ModelSpec } from '../models/models.js';
import { bad, checkModelsList, optNumber, optString } from '../http/validate.js';
import { cuttableWriter } from '../state/billing.js';
import { streamBill } from './stream-bill.js';
import { optObject } from '../http/option-types.js';
import { defineRoutes } from '../http/routes.js';
import type { ChatGateway } from '../providers/types.js';
import { genId, route } from './chat.js';
import { recordGeneration } from './generations.js';
import { metadataFields, metadataHeaders, type RouteAsk, type Routed } from '../routing/routed.js';
import { SPEECH_TYPE, speechFormat, type SpeechFormat } from '../routing/speech-format.js';

type Body = Record<string, unknown>;

/** PCM output of the emulator: 24 kHz, 16-bit little-endian, mono (as the real service's `pcm`). */
export const SAMPLE_RATE = 24_000;
const VOICE_PITCH: Record<string, number> = { alloy: 150, ember: 210, sage: 115 };

export interface Turn {
  text: string;
  voice: string;
  instructions?: string;
}

function checkReferences(refs: unknown): void {
  if (refs === undefined || refs === null) return;
  if (!Array.isArray(refs)) bad('input_references must be an array');
  if (refs.length === 0) return;
  const types = refs.map((p, i) => {
    const t = (p as Body | null)?.type;
    if (t !== 'input_audio' && t !== 'text' && t !== 'image_url') bad(`input_references[${i}].type must be input_audio, text or image_url`);
    return t as string;
  });
  const audio = types.filter((t) => t === 'input_audio').length;
  const images = types.filter((t) => t === 'image_url').length;
  if (audio && images) bad('input_references cannot mix audio and image references');
  if (images) {
    if (images !== 1 || refs.length !== 1) bad('image mode takes exactly one image_url part');
    return;
  }
  if (audio < 1 || audio > 3) bad('audio mode takes 1 to 3 input_audio clips');
  refs.forEach((p, i) => {
    if (types[i] === 'input_audio') {
      const data = ((p as Body).input_audio as Body | undefined)?.data;
      if (typeof data !== 'string' || !/^data:audio\/[\w.+-]+;base64,[A-Za-z0-9+/=]+$/.test(data)) bad(`input_references[${i}].input_audio.data must be a base64 data URI`);
    } else if (typeof (p as Body).text !== 'string') bad(`input_references[${i}].text must be a string`);
  });
  // A transcript belongs to a clip: with several clips each follows its own; a single clip has one, before or after it.
  if (audio === 1 && types.filter((t) => t === 'text').length > 1) bad('input_references: a single clip takes one transcript, before or after it');
  types.forEach((t, i) => {
    if (t !== 'text') return;
    const follows = types[i - 1] === 'input_audio';
    const leadsSingle = audio === 1 && types[i + 1] === 'input_audio' && i === 0;
    if (!follows && !leadsSingle) bad(`input_references[${i}]: a transcript must come right after its clip`);
  });
}

/** `at`: a request's `provider=` fault and the metadata asked (fake-route.ts). */
export function planSpeech(body: Body, at?: RouteAsk): { model: ModelSpec; turns: Turn[]; format: SpeechFormat; speed: number; provider: string; routed: Routed } {
  // `model`, then the `models` fallbacks in order, as chat's (the gateway's own list for speech: docs/gateway.md).
  checkModelsList(body);
  const routed = route(body, 'speech', at);
  const model = routed.model;
  const defaultVoice = body.voice;
  // Required by the spec whatever the input: with turns, it is the voice of a turn that names none.
  if (typeof defaultVoice !== 'string' || defaultVoice === '') bad('voice is required: a non-empty voice id');
  let turns: Turn[];
  if (typeof body.input === 'string') {
    if (body.input.trim() === '') bad('input must not be empty');
    turns = [{ text: body.input, voice: defaultVoice }];
  } else if (Array.isArray(body.input)) {
    if (model.id !== 'local/tts') bad(`${model.id} does not support multi-speaker input`);
    if (body.input.length === 0) bad('input must not be empty');
    turns = body.input.map((t, i) => {
      const turn = t as Body;
      const voice = turn?.voice ?? defaultVoice;
      if (typeof turn?.text !== 'string' || turn.text.trim() === '') bad(`input[${i}].text must be a non-empty string`);
      if (typeof voice !== 'string' || voice === '') bad(`input[${i}].voice must be a non-empty voice id`);
      if (turn.instructions !== undefined && turn.instructions !== null && typeof turn.instructions !== 'string') bad(`input[${i}].instructions must be a string`);
      return { text: turn.text as string, voice: voice as string, instructions: turn.instructions as string | undefined };
    });
  } else {
    bad('input is required: text, or a list of turns');
  }
  for (const t of turns) if (!model.voices!.includes(t.voice)) bad(`voice "${t.voice}" is not a voice of ${model.id} (${model.voices!.join(', ')})`);
  const format = speechFormat(body);
  // The spec sets no range: a model with no speed control refuses any other value than 1 (spec);
  // one with it takes its own range (model behaviour: a speed near 0 would be hours of audio).
  const speed = optNumber(body, 'speed', -Infinity, Infinity) ?? 1;
  const range = model.speedRange;
  if (speed !== 1 && !range) bad(`${model.id} has no speed control: speed must be 1`);
  if (range && (speed < range[0] || speed > range[1])) bad(`${model.id}: speed must be between ${range[0]} and ${range[1]}`);
  optString(body, 'instructions');
  optString(body, 'session_id', 256);
  optString(body, 'user', 256);
  optObject(body, 'trace');
  checkReferences(body.input_references);
  return { model, turns, format, speed, provider: routed.provider, routed };
}

/**
 * Voiced sound, one word at a time: a pitched tone with harmonics and an envelope, then a pause;
 * each piece with the input characters it voices (a word and the space after it).
 */
export function* synthesize(turns: Turn[], speed: number): Generator<[Int16Array, number]> {
  const silence = (seconds: number): [Int16Array, number] => [new Int16Array(Math.round((seconds / speed) * SAMPLE_RATE)), 0];
  yield silence(0.1);
  for (const turn of turns) {
    const base = VOICE_PITCH[turn.voice] ?? 150;
    for (const word of turn.text.split(/\s+/).filter(Boolean)) {
      const rand = prng(seedOf(turn.voice, word));
      const pitch = base * (1 + rand() * 0.4);
      const seconds = (0.08 + 0.05 * Math.min(word.length, 14)) / speed;
      const n = Math.round(seconds * SAMPLE_RATE);
      const out = new Int16Array(n);
      const attack = Math.min(240, n / 4);
      for (let i = 0; i < n; i++) {
        const t = i / SAMPLE_RATE;
        const env = Math.min(1, i / attack, (n - i) / attack);
        const f = pitch * (1 + 0.02 * Math.sin(2 * Math.PI * 5 * t));
        const s = Math.sin(2 * Math.PI * f * t) + 0.5 * Math.sin(4 * Math.PI * f * t) + 0.25 * Math.sin(6 * Math.PI * f * t);
        out[i] = Math.round(env * s * 9000);
      }
      yield [out, word.length + 1];
      yield silence(/[.!?,;:]$/.test(word) ? 0.25 : 0.06);
    }
  }
  yield silence(0.1);
}

/** A plan's audio in its format, a word at a time, each piece with the input characters it voices (the mp3 encoder's last bytes voice none). */
export async function* audioOf(plan: ReturnType<typeof planSpeech>): AsyncGenerator<[Uint8Array | Int8Array, number]> {
  const encoder = plan.format === 'mp3' ? new (await import('@breezystack/lamejs')).Mp3Encoder(1, SAMPLE_RATE, 64) : undefined;
  for (const [samples, voiced] of synthesize(plan.turns, plan.speed)) {
    // Give other requests (and timers) their turn between words, as a streaming server should.
    await new Promise((r) => setImmediate(r));
    yield [encoder ? encoder.encodeBuffer(samples) : new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), voiced];
  }
  if (encoder) yield [encoder.flush(), 0];
}

async function handleSpeech(ctx: Ctx, gateway?: ChatGateway): Promise<void> {
  const startedAt = ctx.store.now();
  const body = await ctx.json();
  if (gateway?.takesSpeech(body)) return gateway.speak(ctx, body);
  const sessionId = ctx.sessionId(body);
  const plan = planSpeech(body, { fault: ctx.fault, ask: ctx.wantsRouterMetadata(), api: 'speech' });
  const chars = plan.turns.reduce((n, t) => n + t.text.length, 0);
  const cost = costOf(plan.model, chars, 0).cost;
  // Audio has no body to carry an id: the header names the generation (`GET /v1/generation?id=`).
  const id = (ctx.generation = genId());
  // A caller who hangs up pays for the characters voiced in the audio written to it (stream-bill.ts).
  const bill = await streamBill(ctx, cost, chars, (voiced) => costOf(plan.model, voiced, 0).cost);
  const res = ctx.res;
  ctx.head(200, { 'content-type': SPEECH_TYPE[plan.format], 'transfer-encoding': 'chunked', 'x-generation-id': id, ...metadataHeaders(metadataFields(plan.routed, 'speech', ctx.wantsRouterMetadata())) });
  const writer = cuttableWriter(ctx, 4);
  // A fault's cut closes the connection too: that is not the caller hanging up.
  res.on('close', () => (bill.progress.hungUp = !writer.cut));
  const closed = () => bill.progress.hungUp || writer.cut;
  const write = async (data: Uint8Array | Int8Array) => {
    if (!closed()) await writer.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  };
  const served = (cut?: { cost: number; cancelled: boolean }) => recordGeneration(ctx, { id, model: plan.model.id, provider: plan.provider, apiType: 'tts', promptTokens: 0, completionTokens: 0, cost: cut?.cost ?? cost, streamed: true, finishReason: cut && !cut.cancelled ? 'error' : null, cancelled: !!cut?.cancelled, startedAt, user: body.user, sessionId });
  const ended = () => {
    const cut = bill.cut();
    if (cut) served(cut);
  };
  for await (const [audio, voiced] of audioOf(plan)) {
    if (closed()) return ended();
    await write(audio);
    if (closed()) continue;
    bill.tokens.addTokens(voiced);
    bill.tokens.written();
  }
  if (closed()) return ended();
  bill.paid();
  res.end();
  served();
}

export const speechRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [{ method: 'POST', path: '/v1/audio/speech', access: 'management', handler: (ctx) => handleSpeech(ctx, parts.gateway) }]);

/** `router speak`: text to speech, the audio streamed to a file (atomically) or to stdout. */
import type { SpeechReference, SpeechRequest, SpeechTurn } from '../../client/resources/speech.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { collect, collectNonEmpty, fallbackModelsFlag, modelFlag, multiplier, nonEmpty, PROVIDER_FLAGS, ROUTING_FLAGS, SESSION_FLAGS } from '../flags/options.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { boundNote, guardSpend, FIXED_SPEND_FLAGS } from '../spend/spend-guard.js';
import { providerFrom, readFileFor, readJsonFile, textFromArgs } from '../io/input.js';
import type { Connected } from '../context.js';
import { costText } from '../../internal/round-cost.js';
import { atExit } from '../../internal/exit-hooks.js';
import { withinMs } from '../../internal/abort-fanout.js';
import { counted, nounFor } from '../../internal/counted.js';
import { cutText } from '../../internal/first-words.js';

const AUDIO_TYPES: Record<string, string> = { '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg', '.flac': 'audio/flac', '.m4a': 'audio/mp4', '.pcm': 'audio/pcm' };
const IMAGE_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif' };

const FLAGS = {
  ...SESSION_FLAGS,
  voice: { flags: '--voice <id>', help: "voice id (provider-specific; default: ROUTER_VOICE, else the profile's voice)", parse: nonEmpty },
  model: modelFlag("speech model, <author>/<slug> (default: ROUTER_SPEECH_MODEL, else the profile's speech_model)", 'speech'),
  models: fallbackModelsFlag('speech'),
  format: { flags: '--format <format>', help: "audio format (default: from -o's extension, else mp3)", choices: ['mp3', 'pcm'] },
  speed: { flags: '--speed <x>', help: 'speaking speed, a multiplier over 0: 1 = normal, 2 twice as fast (honored by models with speed control; the others accept only 1)', parse: multiplier },
  instructions: { flags: '--instructions <text>', help: 'delivery instructions: tone, pacing, emotion', parse: nonEmpty },
  output: { flags: '-o, --output <file>', help: 'write the audio to FILE instead of stdout; an existing FILE is replaced once the audio is whole (kept on an error or Ctrl-C)' },
  turns: { flags: '--turns <file>', help: 'multi-speaker input: JSON array of {"text", "voice"?, "instructions"?}' },
  referenceAudio: { flags: '--reference-audio <file>', help: 'voice-cloning clip, repeatable (1 to 3)', parse: collect },
  referenceText: { flags: '--reference-text <text>', help: 'transcript of the clip typed right before it (of a single clip: right before or after it), repeatable', parse: collectNonEmpty },
  referenceImage: { flags: '--reference-image <file>', help: 'one image for voice design' },
  json: { flags: '--json', help: 'with -o: print {"file", "bytes", "content_type"}' },
  ...FIXED_SPEND_FLAGS,
  usage: { flags: '--usage', help: 'print the audio\'s size and cost to stderr (the cost from the service\'s record of the generation)' },
  ...PROVIDER_FLAGS,
  routerMetadata: ROUTING_FLAGS.routerMetadata,
} as const;

type SpeakOpts = FlagValues<typeof FLAGS>;

export const speak = defineCommand({
  name: 'speak',
  logsUsage: true,
  jsonFields: ['file', 'bytes', 'content_type', 'router_metadata', 'openrouter_metadata'],
  summary: 'synthesize speech: audio bytes to a file or stdout',
  description: "Synthesize speech. Audio streams to -o FILE (written atomically) or to stdout, never to a terminal. Needs a management key (ROUTER_MANAGEMENT_KEY or the profile's management_key). A lone \"help\" is refused, not sent: to speak the word itself, router speak -- help.",
  args: [{ name: '[text...]', help: 'text to speak; "-" or nothing reads stdin' }],
  flags: FLAGS,
  examples: [
    'router speak "Hello there" --voice alloy --model local/tts > hello.mp3',
    'echo "Quiet please" | router speak --voice sage --model local/tts \\\n--format pcm -o quiet.pcm',
    'router speak "Say it like me" --voice alloy --model local/tts \\\n--reference-audio me.wav --reference-text "my words" -o out.mp3',
  ],
  run: runSpeak,
});

/** The formats the service produces, by file extension. */
const FORMAT_OF_EXTENSION: Record<string, 'mp3' | 'pcm'> = { '.mp3': 'mp3', '.pcm': 'pcm', '.raw': 'pcm' };

/** --format, else -o's extension, else mp3; an extension whose format the service does not produce is refused. */
export function audioFormat(opts: { format?: 'mp3' | 'pcm'; output?: string }): 'mp3' | 'pcm' {
  const out = opts.output && opts.output !== '-' ? opts.output : undefined;
  const ext = out ? /\.[^./\\]+$/.exec(out)?.[0]?.toLowerCase() : undefined;
  if (!ext) return opts.format ?? 'mp3';
  const fromExt = FORMAT_OF_EXTENSION[ext];
  if (!fromExt) {
    throw usage(`-o ${out}: the service produces mp3 or pcm (16-bit little-endian), not ${ext.slice(1)}; name the file .mp3 or .pcm`);
  }
  if (opts.format && opts.format !== fromExt) throw usage(`--format ${opts.format} does not match -o ${out} (${fromExt})`);
  return fromExt;
}

async function dataUri(flag: string, path: string, types: Record<string, string>, signal?: AbortSignal): Promise<string> {
  const { extname } = await import('node:path');
  const type = types[extname(path).toLowerCase()];
  if (!type) throw usage(`${flag}: ${path} has an unknown type (use ${Object.keys(types).join(', ')})`);
  return `data:${type};base64,${(await readFileFor(flag, path, signal)).toString('base64')}`;
}

/** The reference parts: each clip followed right away by its transcript, or one image. */
async function references(opts: SpeakOpts, argv: string[], signal?: AbortSignal): Promise<SpeechReference[] | undefined> {
  const clips = opts.referenceAudio ?? [];
  const texts = opts.referenceText ?? [];
  if (opts.referenceImage && clips.length) throw usage('--reference-image and --reference-audio cannot be mixed');
  if (opts.referenceImage) {
    if (texts.length) throw usage('--reference-text goes with --reference-audio');
    return [{ type: 'image_url', image_url: { url: await dataUri('--reference-image', opts.referenceImage, IMAGE_TYPES, signal) } }];
  }
  if (!clips.length) {
    if (texts.length) throw usage('--reference-text goes with --reference-audio');
    return undefined;
  }
  if (clips.length > 3) throw usage('--reference-audio may be given 1 to 3 times');
  const parts: SpeechReference[] = [];
  for (const ref of referenceOrder(argv, clips.length)) {
    if (ref.kind === 'text') parts.push({ type: 'text', text: ref.value });
    else parts.push({ type: 'input_audio', input_audio: { data: await dataUri('--reference-audio', ref.value, AUDIO_TYPES, signal) } });
  }
  return parts;
}

/**
 * The clips and transcripts in the order typed (the option parser keeps each list apart): each
 * transcript goes with the clip right before it; a single clip has one, right before or right after it.
 */
export function referenceOrder(argv: string[], clipCount: number): { kind: 'audio' | 'text'; value: string }[] {
  const order: { kind: 'audio' | 'text'; value: string }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? [argv[i]!.slice(0, argv[i]!.indexOf('=')), argv[i]!.slice(argv[i]!.indexOf('=') + 1)] : [argv[i]!, undefined];
    if (flag !== '--reference-audio' && flag !== '--reference-text') continue;
    const value = inline ?? argv[++i]!;
    order.push({ kind: flag === '--reference-audio' ? 'audio' : 'text', value });
  }
  if (clipCount === 1 && order.filter((ref) => ref.kind === 'text').length > 1) throw usage('a single --reference-audio clip takes one --reference-text, before or after it');
  order.forEach((ref, i) => {
    if (ref.kind !== 'text') return;
    const before = order[i - 1];
    const beforeOnlyClip = clipCount === 1 && i === 0 && order[1]?.kind === 'audio';
    if (!beforeOnlyClip && before?.kind !== 'audio') {
      throw usage(`--reference-text "${cutText(ref.value, 40)}" must come right after the --reference-audio clip it transcribes`);
    }
  });
  return order;
}

/** A turn of --turns: a text, and a non-empty voice and string instructions when it has them. */
function isTurn(t: unknown): t is SpeechTurn {
  if (!t || typeof t !== 'object') return false;
  const { text, voice, instructions } = t as Record<string, unknown>;
  const absent = (v: unknown) => v === undefined || v === null;
  return typeof text === 'string' && (absent(voice) || (typeof voice === 'string' && voice !== '')) && (absent(instructions) || typeof instructions === 'string');
}

/** The model and voice, from the flags or the settings' defaults; both missing (a first `router speak "hi"`) said at once. */
async function speechDefaults(ctx: RunContext<SpeakOpts>): Promise<{ model: string; voice: string }> {
  const { opts } = ctx;
  const { checkedDefault } = await import('../context.js');
  opts.model ??= checkedDefault(await ctx.settings(), 'speechModel');
  opts.voice ??= checkedDefault(await ctx.settings(), 'voice');
  if (!opts.model && !opts.voice) throw usage('no model and no voice: give --model (a speech model, e.g. local/tts) and --voice (e.g. alloy), or set defaults: router config set speech_model local/tts; router config set voice alloy');
  if (!opts.model) throw usage('no model: give --model (a speech model, e.g. local/tts), or set a default: router config set speech_model local/tts');
  if (!opts.voice) throw usage('no voice: give --voice (e.g. alloy), or set a default: router config set voice alloy');
  return { model: opts.model, voice: opts.voice };
}

async function runSpeak(ctx: RunContext<SpeakOpts>, args: string[]): Promise<void> {
  const { io, opts, argv, signal, connect } = ctx;
  const toFile = opts.output !== undefined && opts.output !== '-';
  const { OutputFile, isTerminalPath, refuseOverInput } = await import('../io/output-file.js');
  // A terminal named by -o (/dev/tty, /dev/stdout on one) is refused as stdout on one is, before anything is read or sent.
  const onTerminal = toFile ? isTerminalPath(opts.output!) : io.stdoutTTY;
  if (onTerminal && !opts.dryRun) throw usage(`refusing to write audio to a terminal${toFile ? ` (-o ${opts.output})` : ''}: redirect stdout (> out.mp3) or give -o FILE (-o out.mp3)`);
  if (opts.json && !toFile) throw usage(`${io.jsonFlag} goes with -o FILE (stdout carries the audio)`);
  const format = audioFormat(opts);
  let input: SpeechRequest['input'];
  if (opts.turns) {
    if (args.length) throw usage('give the text either as arguments or with --turns, not both');
    const turns = await readJsonFile('--turns', opts.turns, io);
    if (!Array.isArray(turns) || turns.length === 0 || !turns.every(isTurn)) {
      throw usage('--turns must hold a non-empty JSON array of {"text", "voice"?, "instructions"?}');
    }
    const blank = turns.findIndex((turn: SpeechTurn) => turn.text.trim() === '');
    if (blank >= 0) throw usage(`--turns: turn ${blank + 1} has no text`);
    input = turns as SpeechTurn[];
  } else {
    input = await textFromArgs(args, io, { what: 'text', example: 'echo hi | router speak --voice alloy --model local/tts > hi.mp3' });
  }
  const refs = await references(opts, argv, io.interrupt);
  if (toFile) refuseOverInput('-o', opts.output!, [opts.turns, opts.referenceImage, ...(opts.referenceAudio ?? [])]);
  // What the command line says wrong is said first, then what the settings lack (the key, a default model or voice).
  const connected = await connect({ management: true });
  const { client } = connected;
  const { model, voice } = await speechDefaults(ctx).catch(async (err) => {
    await client.close();
    throw err;
  });
  const req: SpeechRequest = { input, model, voice, response_format: format };
  if (opts.speed !== undefined) req.speed = opts.speed;
  if (opts.instructions) req.instructions = opts.instructions;
  if (refs) req.input_references = refs;
  if (opts.session) req.session_id = opts.session;
  if (opts.user) req.user = opts.user;
  if (opts.models) req.models = opts.models;
  const provider = providerFrom(opts);
  if (provider) req.provider = provider;
  let file: ReturnType<typeof OutputFile.open> | undefined;
  try {
    file = toFile ? OutputFile.open(opts.output!) : undefined;
  } catch (err) {
    await client.close();
    throw err;
  }
  const guard = await guardSpend(ctx, connected, { body: req as unknown as Record<string, unknown>, models: [req.model, ...(req.models ?? [])], completes: false }).catch(async (err) => {
    file?.abortSync();
    await client.close();
    throw err;
  });
  if (guard.dryRun) {
    file?.abortSync();
    return client.close();
  }
  const onAbort = () => file?.abortSync();
  signal.addEventListener('abort', onAbort, { once: true });
  let bytes = 0;
  // Audio begun, then cut (Ctrl-C, a reader gone, a broken stream): the service charges what was voiced.
  // The ledger keeps the call by its generation id, without the cost it never got (usage --reconcile asks for it).
  let begun: string | undefined;
  const keep = () => {
    if (begun && bytes > 0) ctx.logUsage({ endpoint: SPEECH, model: req.model, id: begun });
    begun = undefined;
  };
  let forget: (() => void) | undefined;
  try {
    const audio = await client.speech.create(req, { signal, routerMetadata: opts.routerMetadata }).catch(async (err: unknown) => {
      const voices = [req.voice, ...(Array.isArray(input) ? input.map((t) => t.voice ?? '') : [])].filter(Boolean);
      const { addVoiceGuess } = await import('../service/voice-hint.js');
      await addVoiceGuess(err, client, { env: io.env, settings: connected.settings, model: req.model, voices, typed: ctx.cmd.getOptionValueSource('voice') === 'cli' }).catch(() => {});
      throw err;
    });
    // The attempts as chat's --router-metadata says them: on stderr (stdout may be the audio), before it comes.
    if (audio.metadata && !opts.json) (await import('../answers/routing-note.js')).noteRouting(io, audio.metadata);
    if ((begun = audio.generationId)) {
      forget = atExit(keep);
      ctx.answering(begun, SPEECH);
    }
    for await (const chunk of audio.chunks) {
      bytes += chunk.length;
      if (file) await file.write(chunk);
      else if (!io.out(chunk)) await io.drain();
    }
    // The audio is in its file before its cost is asked: a lookup that is slow, fails or is interrupted
    // (Ctrl-C) loses none of it, and the ledger keeps the call by its id (keep(), below) until it has a cost.
    if (file && bytes > 0) await file.commit();
    // The service reports no usage for speech: the generation its header names has the cost charged.
    const id = audio.generationId;
    const charged = id && (ctx.logging || opts.usage) ? await chargedFor(client, id, signal) : undefined;
    const cost = typeof charged === 'number' ? charged : undefined;
    forget?.();
    begun = undefined;
    ctx.logUsage({ endpoint: SPEECH, model: req.model, ...(id ? { id } : {}), ...(cost !== undefined ? { cost } : {}) });
    if (bytes === 0) throw new CliError('the service sent no audio (an empty answer)', EXIT.SERVER);
    const costNote =
      cost !== undefined ? `, cost $${costText(cost)}`
      // Refused to this key, the lookup would be refused to usage --reconcile alike.
      : charged === 'forbidden' ? `; its cost is not known: this key may not read generations (403), nor can router usage --reconcile with it (router generation ${id} with a key that may)`
      : id ? '; its cost is not known yet (router usage --reconcile asks the service)' : '; the service reports no tokens or cost for speech';
    const characters = typeof input === 'string' ? input.length : input.reduce((n, t) => n + t.text.length, 0);
    if (opts.usage) ctx.closingNote(`usage: ${bytes} ${nounFor(bytes, 'byte')} of audio for ${characters} ${nounFor(characters, 'character')}${costNote}${boundNote(guard)}`);
    if (file) {
      if (opts.json) io.json({ file: opts.output, bytes, content_type: audio.contentType, ...audio.metadata });
      else io.info(`wrote ${counted(bytes, 'byte')} of ${audio.contentType} to ${opts.output}`);
    }
  } catch (err) {
    file?.abortSync();
    forget?.();
    keep();
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await client.close();
  }
}

const SPEECH = '/v1/audio/speech';

/**
 * How long the cost of audio already delivered is waited for, retries and all: stdout (a player reading
 * it) ends only when speak does, and a slow service held it for minutes (120 s an attempt, retried).
 */
const COST_WAIT_MS = 5_000;

/**
 * What the service charged for a generation, or undefined where it does not say (yet, or in time): usage --reconcile
 * asks again; 'forbidden' where this key may not read it (403), which asking again with it will not change.
 */
async function chargedFor(client: Connected['client'], id: string, signal: AbortSignal): Promise<number | 'forbidden' | undefined> {
  try {
    const cost = (await withinMs(signal, COST_WAIT_MS, (bounded) => client.generations.get(id, { signal: bounded }))).total_cost;
    return typeof cost === 'number' && Number.isFinite(cost) ? cost : undefined;
  } catch (err) {
    if (signal.aborted) throw err;
    return (err as { status?: unknown }).status === 403 ? 'forbidden' : undefined;
  }
}

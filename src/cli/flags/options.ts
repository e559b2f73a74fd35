import { InvalidArgumentError } from '../commander.js';
import type { FlagSpec, FlagTable, ModelPurpose } from './flags.js';
import { isModelId, MODEL_ID_MAX, MODEL_ID_SYNTAX } from '../../client/facts.js';
import { visible } from '../../internal/visible.js';
import { usage } from '../exit-codes.js';

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * The one reading of a number a user typed (every numeric flag and value): decimal, as in JSON
 * (an exponent allowed); `0x10`, `0b1`, `Infinity` or `1_000` are not numbers. Undefined if not one.
 */
export function decimalNumber(value: string): number | undefined {
  const text = value.trim();
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Option-argument parsers: range checks happen here, before anything is sent. */
export function numberIn(min: number, max: number) {
  return (value: string): number => {
    const n = decimalNumber(value);
    if (n === undefined) throw new InvalidArgumentError('not a number.');
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${min} and ${max}.`);
    return n;
  };
}

const SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration in seconds: a number of seconds, or with a unit (500ms, 30s, 2m, 1h, 1d). */
export function secondsIn(min: number, max: number) {
  const fmt = (n: number) => (n >= 3600 && n % 3600 === 0 ? `${n / 3600}h` : n >= 60 && n % 60 === 0 ? `${n / 60}m` : n < 1 ? `${Math.round(n * 1000)}ms` : `${n}s`);
  return (value: string): number => {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
    if (!m) throw new InvalidArgumentError('not a duration (seconds, or with a unit: 500ms, 30s, 2m, 1h).');
    const n = Number(m[1]) * SECONDS[(m[2] ?? 's').toLowerCase()]!;
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${fmt(min)} and ${fmt(max)}.`);
    return n;
  };
}

/** Any finite number: for values whose range is the provider's or the model's, not the API's. */
export const anyNumber = numberIn(-Infinity, Infinity);

/**
 * A multiplier whose 1 changes nothing (a speed, a repetition penalty): any finite number over 0, its upper
 * bound the model's. 0 or less is no multiplier at all: before, it was sent and the service answered 400.
 */
export function multiplier(value: string): number {
  const n = anyNumber(value);
  if (n <= 0) throw new InvalidArgumentError('must be more than 0 (a multiplier: 1 is normal).');
  return n;
}

export function integerIn(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer.');
    const n = Number(value);
    if (n > Number.MAX_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER) throw new InvalidArgumentError(`too large (at most ${max}).`);
    if (n < min || n > max) throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}.` : `must be between ${min} and ${max}.`);
    return n;
  };
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A size in bytes: a whole number, or with K, M or G (powers of 1024; KB, MiB and the like too). */
export function bytesIn(min: number, max: number) {
  const fmt = (n: number) => (n % 1024 ** 2 === 0 ? `${n / 1024 ** 2} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : n % 1e6 === 0 ? `${n / 1e6} MB` : `${n} bytes`);
  return (value: string): number => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*$/i.exec(value);
    if (!m) throw new InvalidArgumentError('not a size (bytes, or with K, M or G: 50M).');
    const n = Math.floor(Number(m[1]) * SIZE_UNITS[m[2]!.toLowerCase()]!);
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${fmt(min)} and ${fmt(max)}.`);
    return n;
  };
}

/** The emulator's models (router serve), by slug: a bare `echo` is most likely `local/echo`. */
const LOCAL_SLUGS = ['echo', 'lorem', 'unavailable', 'embed', 'tts', 'tts-basic', 'judge', 'vision', 'tools', 'thinker', 'painter'];

/** What to say after "must look like <author>/<slug>" about a value that does not: a guess, or where the ids are. */
export function modelShapeHint(value: string): string {
  return localGuess(value) ?? (value.includes('/') ? '' : ` (an author, a slash, a model: local/echo; the list: router models)`);
}

/** ": did you mean local/echo?" for `echo`. */
function localGuess(value: string): string | undefined {
  const slug = value.trim().toLowerCase();
  return LOCAL_SLUGS.includes(slug) ? `: did you mean local/${slug}?` : undefined;
}

/** A model id that came from elsewhere (a setting, the environment): a usage error names where. */
export function checkModel(value: string, from: string): string {
  if (value.length > MODEL_ID_MAX) throw usage(`${from} is ${value.length} characters long: a model id (${MODEL_ID_SYNTAX}) has at most ${MODEL_ID_MAX}`);
  if (!isModelId(value)) throw usage(`${from} must look like ${MODEL_ID_SYNTAX}${value.includes('/') ? '' : ' or name an alias'}, got "${visible(value)}"${localGuess(value) ?? (value.includes('/') ? '' : ' (router aliases list)')}`);
  return value;
}

/** A model id (<author>/<slug>): a typo in its shape is refused before anything is sent. */
export function modelId(value: string): string {
  // Of the right shape, but too long: "must look like <author>/<slug>" would name a shape it has.
  if (value.length > MODEL_ID_MAX) throw new InvalidArgumentError(`it is ${value.length} characters long: a model id has at most ${MODEL_ID_MAX}`);
  if (!isModelId(value)) throw new InvalidArgumentError(`must look like ${MODEL_ID_SYNTAX}${modelShapeHint(value) || '.'}`);
  return value;
}

/** A model id, or what may be an alias (no slash): an alias is looked up as the command runs (./model-alias.ts). */
export function modelOrAlias(value: string): string {
  return /^[A-Za-z0-9][\w.:-]{0,63}$/.test(value) ? value : modelId(value);
}

/** Comma-separated model ids, also repeatable. */
export function modelList(value: string, previous: string[] = []): string[] {
  const ids = commaList(value, []);
  const long = ids.find((id) => id.length > MODEL_ID_MAX);
  if (long !== undefined) throw new InvalidArgumentError(`a model id of ${long.length} characters: one has at most ${MODEL_ID_MAX}`);
  const bad = ids.find((id) => !isModelId(id));
  if (bad !== undefined) throw new InvalidArgumentError(`"${bad}" does not look like ${MODEL_ID_SYNTAX}${modelShapeHint(bad) || '.'}`);
  return [...previous, ...ids];
}

/** Repeatable option: collects every occurrence. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * A file flag's value (--schema, --tools, --attach): PATH, or "@PATH" as `-s @FILE`, `router api -F` and curl
 * name a file ("@-": stdin). One "@" is taken off: a file whose name starts with "@" is given as ./@name.
 */
export function fileArg(value: string): string {
  return value.length > 1 && value.startsWith('@') ? value.slice(1) : value;
}

/** A repeatable file flag (--attach): each value as fileArg takes it. */
export function collectFiles(value: string, previous: string[] = []): string[] {
  return collect(fileArg(value), previous);
}

/** Repeatable stop sequence: a space or a line break is one, nothing is not. */
export function stopSequence(value: string, previous: string[] = []): string[] {
  if (value === '') throw new InvalidArgumentError('must not be empty.');
  return collect(value, previous);
}

/** Comma-separated list, also repeatable. */
export function commaList(value: string, previous: string[] = []): string[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('empty list.');
  return [...previous, ...items];
}

/** Repeatable `key=value`. */
export function keyValue(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected key=value.');
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** Repeatable `name=value` of a placeholder (`$name`): llm's `--param name value` is made this word by ../short-flags.ts. */
export function paramValue(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  const name = eq < 0 ? value : value.slice(0, eq);
  if (!/^[A-Za-z_]\w*$/.test(name)) throw new InvalidArgumentError('expected NAME VALUE (or NAME=VALUE), NAME as in $NAME: letters, digits and _.');
  if (eq < 0) throw new InvalidArgumentError(`expected NAME VALUE (or NAME=VALUE): ${name} has no value.`);
  if (name === 'input') throw new InvalidArgumentError('$input is the prompt given: it takes no value of its own.');
  return { ...previous, [name]: value.slice(eq + 1) };
}

/** A text that says something: empty or only spaces is refused (an unset shell variable, a slip). */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

/** Repeatable, each occurrence non-empty. */
export function collectNonEmpty(value: string, previous: string[] = []): string[] {
  return collect(nonEmpty(value), previous);
}

/** A non-empty text of at most n characters. */
export function textUpTo(n: number) {
  return (value: string): string => {
    if (value.length > n) throw new InvalidArgumentError(`at most ${n} characters.`);
    return nonEmpty(value);
  };
}

/**
 * The flag groups commands share, each defined once and spread into the commands' tables (in help
 * order). A command whose wording of a flag differs means a different thing by it (speak's --usage).
 */

/** `-m, --model`, in the words of the command (what kind of model it takes, where its default comes from); a Tab offers that kind. */
export function modelFlag<const H extends string, const P extends ModelPurpose>(help: H, purpose: P) {
  return { flags: '-m, --model <id>', help, parse: modelOrAlias, complete: `${purpose}-models` } as const;
}

/** `--models`, the fallbacks of a command's `--model`, of the same kind. */
export function fallbackModelsFlag<const P extends ModelPurpose>(purpose: P) {
  return { flags: '--models <ids>', help: 'fallback models, comma-separated, tried in order', parse: modelList, complete: `${purpose}-model-ids` } as const;
}

/** --session and --user, with the spec's 256-character limits (chat, responses, speech). */
export const SESSION_FLAGS = {
  session: { flags: '--session <id>', help: 'session id for grouping (and sticky routing), <= 256 chars', parse: textUpTo(256) },
  user: { flags: '--user <id>', help: 'end-user identifier, <= 256 chars', parse: textUpTo(256) },
} as const satisfies FlagTable;

/** --user where the spec sets no limit on it (embeddings, decisions). */
export const OPEN_USER_FLAG = { flags: '--user <id>', help: 'end-user identifier', parse: nonEmpty } as const satisfies FlagSpec;

/** The provider routing preferences: the body's `provider` (src/cli/io/input.ts providerFrom). */
export const PROVIDER_FLAGS = {
  providerOnly: { flags: '--provider-only <slugs>', help: 'only these providers, comma-separated', parse: commaList },
  providerOrder: { flags: '--provider-order <slugs>', help: 'try providers in this order, comma-separated', parse: commaList },
  providerIgnore: { flags: '--provider-ignore <slugs>', help: 'never these providers, comma-separated', parse: commaList },
  fallbacks: { flags: '--no-fallbacks', help: 'do not fall back to other providers' },
} as const satisfies FlagTable;

/** The routing and observability flags of chat and responses, with the spec's limits. */
export const ROUTING_FLAGS = {
  ...SESSION_FLAGS,
  metadata: { flags: '--metadata <key=value>', help: 'metadata pair, repeatable (<= 16; keys <= 64, values <= 512 chars)', parse: keyValue },
  ...PROVIDER_FLAGS,
  routerMetadata: { flags: '--router-metadata', help: 'ask for routing metadata (printed to stderr; in --json output)', oneCall: true },
} as const satisfies FlagTable;

/** Generation: the model and the sampling flags chat and responses share. */
export const GENERATION_FLAGS = {
  model: modelFlag("model, <author>/<slug> (default: the profile's model)", 'chat'),
  models: fallbackModelsFlag('chat'),
  temperature: { flags: '-t, --temperature <t>', help: 'sampling temperature, 0 to 2', parse: numberIn(0, 2) },
  topP: { flags: '--top-p <p>', help: 'nucleus sampling, 0 to 1', parse: numberIn(0, 1) },
} as const satisfies FlagTable;

export const REASONING_EFFORTS = ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none'] as const;
export const REASONING_EFFORT_FLAG = { flags: '--reasoning-effort <level>', help: 'reasoning effort', choices: REASONING_EFFORTS } as const satisfies FlagSpec;

/** How an answer is shown: as received, and what it used. */
export const OUTPUT_FLAGS = {
  raw: { flags: '--raw', help: 'print the text exactly as received (on a terminal it is rendered as Markdown)' },
  usage: { flags: '--usage', help: 'print token usage and cost to stderr', oneCall: true },
} as const satisfies FlagTable;

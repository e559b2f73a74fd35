import { parse } from 'yaml';
import { MODEL_ID_PATTERN, MODELS } from '../models/models.js';
import { inListOrder, PARAMETER_NAMES } from '../models/parameters.js';
import type { ProviderModel } from './types.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './bounded.js';
import { didYouMean } from '../../internal/did-you-mean.js';

/** One upstream of a providers file, its key already read from the environment (never from the file). */
export interface ProviderConfig {
  name: string;
  baseUrl: string;
  apiKey?: string;
  /** `api_key_env`: the variable named for its key (never the key), for the words of a refusal. */
  keyEnv?: string;
  models: ProviderModel[];
  /** Whether the upstream answers `POST /responses` (the OpenAI Responses API): then Responses for its models go there. */
  responses?: boolean;
  /** Milliseconds to wait for the answer's head, and between two pieces of its body (default 60 s). */
  timeoutMs: number;
  /** The longest wait from the request for a stream's first event or a whole answer; keep-alive comments do not count (unset: none). */
  firstEventMs?: number;
  /** The longest wait between a stream's events once one with some of an answer came; keep-alive comments do not count (`idle_timeout_ms`). */
  idleMs?: number;
  /** The largest whole answer, or stream event, taken from it (`max_answer_mb`; default 64 MiB). */
  maxAnswerBytes?: number;
}

export interface GatewayConfig {
  providers: ProviderConfig[];
  /** Whether the emulator's fake models (local/…) are served beside the upstreams (default true). */
  localModels: boolean;
  /** How many requests of one batch over providers are in flight at once (default 8). */
  batchConcurrency?: number;
}

export const DEFAULT_BATCH_CONCURRENCY = 8;

/** Default of `idle_timeout_ms`: a minute without an event, pings or not, after a stream's first answering one. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const MAX_BATCH_CONCURRENCY = 256;

export class ProvidersFileError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9._-]*$/;
/** The paths the gateway adds to a provider's base_url: a base_url ending in one was copied from an endpoint's docs. */
const ENDPOINT_PATHS = ['/chat/completions', '/embeddings', '/responses', '/audio/speech'];
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A price as written: a YAML number, 0 or more. Left out, a side is free; written empty, null, quoted or not a number
 * it is refused (once, `""` and `null` were priced at 0 and `"0.5"` taken as written: a typo is never free in silence).
 */
function price(where: string, v: unknown): number {
  const must = `${where} must be a price per token (a number, 0 or more`;
  if (v === null || v === '') throw new ProvidersFileError(`${where} is empty: ${must.slice(where.length + 1)}; leave the member out for a free side)`);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) throw new ProvidersFileError(`${where} is the string "${v}": write the number without quotes, ${v.trim()}`);
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ProvidersFileError(`${must}), not ${typeof v === 'string' ? `"${v}"` : String(v)}`);
  return v;
}

/** USD per token at or past which a price is likely one per million tokens (as model lists show them): $1,000 per million. */
const PER_MILLION_LOOKALIKE = 0.001;
function perMillionWarning(where: string, n: number): string {
  const perToken = (n / 1e6).toFixed(15).replace(/\.?0+$/, '');
  return `warning: ${where} is ${n} USD per token, ${Number((n * 1e6).toPrecision(12))} per million tokens: if ${n} is per million, write ${perToken}`;
}

/**
 * How a file is read. `keys`: `required` when upstreams are asked (a provider's `api_key_env` unset is a mistake);
 * `unused` when none is (a replay: nothing is sent, so nothing goes without a key); else a warning.
 */
export interface ReadOptions {
  warn?: (line: string) => void;
  keys?: 'required' | 'unused';
}

function providerOf(raw: unknown, i: number, env: NodeJS.ProcessEnv, { warn = () => {}, keys }: ReadOptions): ProviderConfig {
  const at = `providers[${i}]`;
  if (!isObj(raw)) throw new ProvidersFileError(`${at} must be a mapping`);
  const known = ['name', 'base_url', 'api_key_env', 'models', 'embedding_models', 'prices', 'max_completion_tokens', 'supported_parameters', 'timeout_ms', 'first_event_timeout_ms', 'idle_timeout_ms', 'max_answer_mb', 'responses', 'speech_models'];
  const unknown = Object.keys(raw).find((k) => !known.includes(k));
  if (unknown === 'api_key') throw new ProvidersFileError(`${at}.api_key: keys never go in the file; name an environment variable with api_key_env`);
  if (unknown) throw new ProvidersFileError(unknownSetting(at, unknown, known));
  const name = raw.name;
  if (typeof name !== 'string' || !SLUG.test(name)) throw new ProvidersFileError(`${at}.name must be a provider slug (lower case letters, digits, . _ -)`);
  const where = `provider ${name}`;
  let baseUrl: URL;
  try {
    baseUrl = new URL(String(raw.base_url ?? ''));
  } catch {
    throw new ProvidersFileError(`${where}: base_url must be an http(s) URL, such as http://127.0.0.1:11434/v1`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new ProvidersFileError(`${where}: base_url must be an http(s) URL`);
  if (baseUrl.username || baseUrl.password) throw new ProvidersFileError(`${where}: base_url holds a user or password: keys never go in the file; name an environment variable with api_key_env`);
  // The paths (/chat/completions, …) go at its end: after a query they would be part of it.
  if (/[?#]/.test(String(raw.base_url))) throw new ProvidersFileError(`${where}: base_url must end in its path, without ?query or #fragment (/chat/completions and the others are added at its end)`);
  const endpoint = ENDPOINT_PATHS.find((path) => baseUrl.pathname.replace(/\/+$/, '').endsWith(path));
  if (endpoint) throw new ProvidersFileError(`${where}: base_url ends in ${endpoint}, which the gateway adds itself: give the root before it, ${String(raw.base_url).replace(/\/+$/, '').slice(0, -endpoint.length)}`);
  let apiKey: string | undefined;
  if (raw.api_key_env !== undefined) {
    if (typeof raw.api_key_env !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.api_key_env)) throw new ProvidersFileError(`${where}: api_key_env must name an environment variable`);
    apiKey = env[raw.api_key_env] || undefined;
    if (!apiKey && keys === 'required') throw new ProvidersFileError(`${where}: api_key_env names ${raw.api_key_env}, which is not set: export it (or drop api_key_env for a provider that takes no key)`);
    if (!apiKey && keys !== 'unused') warn(`warning: provider ${name}: ${raw.api_key_env} is not set; its requests go without a key`);
  }
  if (raw.models !== undefined && !isObj(raw.models)) throw new ProvidersFileError(`${where}: models must map the gateway's model ids to the upstream's names`);
  if (raw.embedding_models !== undefined && !isObj(raw.embedding_models)) throw new ProvidersFileError(`${where}: embedding_models must map the gateway's model ids to the upstream's names`);
  if (raw.speech_models !== undefined && !isObj(raw.speech_models)) throw new ProvidersFileError(`${where}: speech_models must map the gateway's model ids to the upstream's names`);
  type Kind = 'chat' | 'embedding' | 'speech';
  const of = (map: unknown, kind: Kind) => Object.entries((map as Obj | undefined) ?? {}).map(([id, up]): [string, unknown, Kind] => [id, up, kind]);
  const named = [...of(raw.models, 'chat'), ...of(raw.embedding_models, 'embedding'), ...of(raw.speech_models, 'speech')];
  if (named.length === 0) throw new ProvidersFileError(`${where}: models must map the gateway's model ids to the upstream's names`);
  const prices = raw.prices === undefined ? {} : raw.prices;
  if (!isObj(prices)) throw new ProvidersFileError(`${where}: prices must map model ids to {prompt, completion}`);
  const models = named.map(([id, upstream, kind]): ProviderModel => {
    if (!MODEL_ID_PATTERN.test(id)) throw new ProvidersFileError(`${where}: model id "${id}" must look like <author>/<slug>`);
    if (typeof upstream !== 'string' || !upstream) throw new ProvidersFileError(`${where}: models.${id} must be the upstream's model name`);
    const p = prices[id];
    const base = kind === 'chat' ? { id, upstream } : { id, upstream, kind };
    if (p === undefined) return base;
    if (!isObj(p)) throw new ProvidersFileError(`${where}: prices.${id} must be {prompt, completion}`);
    const odd = Object.keys(p).find((k) => k !== 'prompt' && k !== 'completion');
    if (odd) throw new ProvidersFileError(`${where}: prices.${id}: unknown price "${odd}" (known: prompt, completion, USD per token)`);
    const priced = { prompt: 'prompt' in p ? price(`${where}: prices.${id}.prompt`, p.prompt) : 0, completion: 'completion' in p ? price(`${where}: prices.${id}.completion`, p.completion) : 0 };
    for (const side of ['prompt', 'completion'] as const) if (priced[side] >= PER_MILLION_LOOKALIKE) warn(perMillionWarning(`${where}: prices.${id}.${side}`, priced[side]));
    return { ...base, prices: priced };
  });
  const stray = Object.keys(prices).find((id) => !models.some((m) => m.id === id));
  if (stray) throw new ProvidersFileError(`${where}: prices.${stray} names a model that is not in its models`);
  limitsOf(raw.max_completion_tokens, models, where);
  parametersOf(raw.supported_parameters, models, where);
  const timeoutMs = raw.timeout_ms ?? 60_000;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1) throw new ProvidersFileError(`${where}: timeout_ms must be a whole number of milliseconds`);
  const firstEventMs = raw.first_event_timeout_ms;
  if (firstEventMs !== undefined && (typeof firstEventMs !== 'number' || !Number.isInteger(firstEventMs) || firstEventMs < 1)) throw new ProvidersFileError(`${where}: first_event_timeout_ms must be a whole number of milliseconds`);
  const idleMs = raw.idle_timeout_ms ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (typeof idleMs !== 'number' || !Number.isInteger(idleMs) || idleMs < 1) throw new ProvidersFileError(`${where}: idle_timeout_ms must be a whole number of milliseconds`);
  const maxMb = raw.max_answer_mb ?? DEFAULT_MAX_ANSWER_BYTES / 2 ** 20;
  if (typeof maxMb !== 'number' || !Number.isFinite(maxMb) || maxMb <= 0 || maxMb > 4096) throw new ProvidersFileError(`${where}: max_answer_mb must be a number of MiB, more than 0 and at most 4096`);
  if (raw.responses !== undefined && typeof raw.responses !== 'boolean') throw new ProvidersFileError(`${where}: responses must be true or false`);
  return { name, baseUrl: baseUrl.href.replace(/\/+$/, ''), apiKey, ...(typeof raw.api_key_env === 'string' && { keyEnv: raw.api_key_env }), models, timeoutMs, ...(firstEventMs !== undefined && { firstEventMs }), idleMs, maxAnswerBytes: Math.round(maxMb * 2 ** 20), responses: raw.responses === true };
}

/** Each `key.<chat model id>: value` of a provider's map `raw` (one to each of its chat models), given with its model. */
function perChatModel(raw: unknown, models: ProviderModel[], where: string, key: string, values: string, each: (model: ProviderModel, value: unknown, at: string) => void): void {
  if (raw === undefined) return;
  if (!isObj(raw)) throw new ProvidersFileError(`${where}: ${key} must map chat model ids to ${values}`);
  for (const [id, value] of Object.entries(raw)) {
    const model = models.find((m) => m.id === id && (m.kind ?? 'chat') === 'chat');
    if (!model) throw new ProvidersFileError(`${where}: ${key}.${id} names a model that is not among its chat models`);
    each(model, value, `${where}: ${key}.${id}`);
  }
}

/** `max_completion_tokens`: a chat model's most tokens per answer, set on its entry in `models`. */
function limitsOf(raw: unknown, models: ProviderModel[], where: string): void {
  perChatModel(raw, models, where, 'max_completion_tokens', 'a number of tokens', (model, n, at) => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new ProvidersFileError(`${at} must be a whole number of tokens, 1 or more`);
    model.maxCompletionTokens = n;
  });
}

/** `supported_parameters`: the request parameters a chat model is listed as taking, in place of UPSTREAM_CHAT_PARAMETERS. */
function parametersOf(raw: unknown, models: ProviderModel[], where: string): void {
  perChatModel(raw, models, where, 'supported_parameters', 'lists of parameter names', (model, names, at) => {
    if (!Array.isArray(names)) throw new ProvidersFileError(`${at} must be a list of parameter names, such as [temperature, tools]`);
    // A typo would hide the model from `router models --supports` for the name meant.
    const odd = names.find((n) => typeof n !== 'string' || !PARAMETER_NAMES.includes(n));
    if (odd !== undefined) throw new ProvidersFileError(`${at}: unknown parameter "${String(odd)}" (known: ${PARAMETER_NAMES.join(', ')})`);
    model.parameters = inListOrder(names as string[]);
  });
}

const TOP_LEVEL = ['providers', 'local_models', 'batch_concurrency'];

/** A key the file may not hold, with the one it most likely meant, else every key it may. */
function unknownSetting(at: string, key: string, known: readonly string[]): string {
  const meant = didYouMean(key, known);
  return `${at ? `${at}: ` : ''}unknown setting "${key}"${meant || ` (known: ${known.join(', ')})`}`;
}

/** A providers file's text, checked whole: the first mistake is one line that names where it is. */
export function parseProviders(text: string, env: NodeJS.ProcessEnv, opts: ReadOptions = {}): GatewayConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ProvidersFileError(`not YAML: ${(err as Error).message.split('\n')[0]!.replace(/:$/, '')}`);
  }
  // A misspelt key first: `provider:` (no s) is that typo, not a file without providers.
  const unknown = isObj(doc) ? Object.keys(doc).find((k) => !TOP_LEVEL.includes(k)) : undefined;
  if (unknown) throw new ProvidersFileError(unknownSetting('', unknown, TOP_LEVEL));
  if (!isObj(doc) || !Array.isArray(doc.providers)) throw new ProvidersFileError('the file must hold `providers:`, a list of upstreams');
  const batchConcurrency = doc.batch_concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  if (typeof batchConcurrency !== 'number' || !Number.isInteger(batchConcurrency) || batchConcurrency < 1 || batchConcurrency > MAX_BATCH_CONCURRENCY) throw new ProvidersFileError(`batch_concurrency must be a whole number from 1 to ${MAX_BATCH_CONCURRENCY}`);
  if (doc.local_models !== undefined && typeof doc.local_models !== 'boolean') throw new ProvidersFileError('local_models must be true or false');
  const providers = doc.providers.map((p, i) => providerOf(p, i, env, opts));
  const names = new Set<string>();
  const kinds = new Map<string, { kind: string; provider: string }>();
  for (const p of providers) {
    if (p.name === 'local-alpha' || p.name === 'local-beta') throw new ProvidersFileError(`provider ${p.name}: the fake models' provider is named so; choose another name`);
    if (names.has(p.name)) throw new ProvidersFileError(`provider ${p.name} is named twice`);
    names.add(p.name);
    // One id, one kind of model: a chat model elsewhere is not an embedding model here.
    for (const m of p.models) {
      const kind = m.kind ?? 'chat';
      const other = kinds.get(m.id);
      if (other && other.kind !== kind) throw new ProvidersFileError(`model ${m.id} is listed for ${other.kind} (provider ${other.provider}) and for ${kind} (provider ${p.name}): one id, one kind of model`);
      kinds.set(m.id, { kind, provider: p.name });
    }
  }
  if (!providers.length && doc.local_models === false) throw new ProvidersFileError('the file serves no model: providers is empty and local_models is false');
  const localModels = doc.local_models !== false;
  // A fake model served beside the file's is one of its ids too: an upstream may stand in for it, of its kind only.
  for (const fake of localModels ? MODELS : []) {
    const other = kinds.get(fake.id);
    if (other && other.kind !== fake.kind) throw new ProvidersFileError(`model ${fake.id} is listed for ${other.kind} (provider ${other.provider}) and is a fake ${fake.kind} model here (local_models is on): one id, one kind of model; give it another id, or set local_models: false`);
  }
  return { providers, localModels, batchConcurrency };
}

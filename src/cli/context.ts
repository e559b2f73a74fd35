import type { RouterClient } from '../client/index.js';
import { APIError, ConnectionError, ProxyRefusedError, TimeoutError } from '../client/errors.js';
import { sourceName, type Settings } from '../config/settings.js';
import { CliError, EXIT } from './exit-codes.js';
import { checkModel } from './flags/options.js';
import type { GlobalFlags, IO } from './io/io.js';
import { spinAgain } from './io/spinner.js';
import { plainHttpWarning } from './io/plain-http.js';

export interface Connected {
  client: RouterClient;
  settings: Settings;
  /** Under a budget, SHA-256 of the key sent (as the keys API names it), for the holds: node:crypto is loaded only then. */
  keyHash?: string;
}

export interface ConnectOptions {
  /** Use the management key (speech, decisions). */
  management?: boolean;
  /** Name the key's SHA-256 (Connected.keyHash) without budgets too (usage --reconcile: holds that name no key). */
  keyHash?: boolean;
}

/** A retry's wait longer than this is said on stderr even off a terminal. */
const SAID_WAIT_MS = 2_000;

/** The runs whose setup notes were said (a REPL, and a refused model's lookup, connect again: said once). */
const told = new WeakSet<IO>();

/**
 * Builds the client from the run's settings. Call it only after the command's own input is
 * validated, so that bad input never costs a request.
 */
export async function connect(io: IO, flags: GlobalFlags, settings: Settings, opts: ConnectOptions = {}): Promise<Connected> {
  // A --model was checked as it was parsed; one from ROUTER_MODEL or a profile is checked here, before any request.
  checkedDefault(settings, 'model');
  if (!told.has(io)) {
    told.add(io);
    for (const line of (await import('../config/env-names.js')).settingsNotes(settings, io.env)) io.note(line);
  }
  const shared = await import('../config/client-settings.js');
  const sent = await withKey(io, settings, opts);
  settings = sent.settings;
  const key = sent.key;
  io.addSecret(settings.apiKey);
  io.addSecret(settings.managementKey);
  // The keys not sent too (another profile's, the profile's under an environment's): a prompt may hold any.
  await hideKnownKeys(io);
  if (!key) {
    throw new CliError(
      `no API key for profile "${settings.profile}": set ROUTER_API_KEY, or run "router login"${(await import('./flags/other-tools-key.js')).otherToolsKey(io.env)}`,
      EXIT.AUTH,
    );
  }
  const { RouterClient, DEFAULT_API_ROOT } = await import('../client/index.js');
  const { apiKey, apiRoot, headers, proxy } = await shared.connectionOptions(settings, key, io.env, DEFAULT_API_ROOT);
  const client = new RouterClient({
    batches: await batchPlaces(io.env, apiRoot ?? DEFAULT_API_ROOT, settings.batchesPath),
    apiKey,
    headers,
    apiRoot,
    timeoutMs: flags.timeout !== undefined ? flags.timeout * 1000 : undefined,
    maxRetries: flags.maxRetries,
    proxy,
    onPlainHttp: ({ host }) => plainHttpWarning(io, `the API key goes to ${host}`),
    onRetry: ({ attempt, delayMs, reason }) => {
      const line = `retry ${attempt} in ${(delayMs / 1000).toFixed(1)}s: ${reason}`;
      // A wait a script's user would wonder about is said even when piped.
      if (delayMs > SAID_WAIT_MS && !io.quiet) io.note(line);
      else io.info(line);
      // Still waiting: the spinner the note cleared comes back below it.
      spinAgain(io);
    },
  });
  const budgeted = settings.dailyBudget !== undefined || settings.monthlyBudget !== undefined;
  return { client, settings, ...(budgeted || opts.keyHash ? { keyHash: (await import('node:crypto')).createHash('sha256').update(key).digest('hex') } : {}) };
}

/**
 * Registers every key the run knows (the environment's, each profile's in the config file: src/config/known-keys.ts)
 * as a secret of `io`; `everywhere`: every string it prints to stdout is shown with them hidden too.
 */
export async function hideKnownKeys(io: IO, everywhere = false): Promise<void> {
  const { keys, marks, unread } = (await import('../config/known-keys.js')).knownKeys(io.env);
  for (const key of keys) io.addSecret(key);
  io.marked.add(marks);
  if (!everywhere) return;
  io.hidesKeys = true;
  // Said by a command that only prints what was kept (the others stop on a damaged file): why a profile's key may show.
  if (unread !== undefined) io.note(`warning: the profiles' keys are not hidden: ${unread}`);
}

/** Where batches live: named outright (batches_path), else as found out before at this root; and every batch seen goes to the local index. */
async function batchPlaces(env: NodeJS.ProcessEnv, root: string, named: string | undefined) {
  const [{ rememberedPlace, rememberPlace }, { indexBatch }] = await Promise.all([import('../batch/places.js'), import('../batch/local-index.js')]);
  return {
    // Read when a batch is asked for: most runs never are (a one-shot chat reads no file for it).
    get place() {
      return named ? { path: named, listing: rememberedPlace(env, root)?.listing } : rememberedPlace(env, root);
    },
    fixed: named !== undefined,
    onPlace: (place: { path?: string; listing?: boolean }) => rememberPlace(env, root, named ? { listing: place.listing } : place),
    onBatch: (b: Parameters<typeof indexBatch>[2]) => indexBatch(env, root, b),
  };
}

/**
 * The settings with the key the command sends read where it lives (a keychain, a key command): only
 * that one, only now (src/config/client-settings.ts). A key that is set but cannot be had is exit 3, one line.
 */
async function withKey(io: IO, settings: Settings, opts: ConnectOptions) {
  try {
    return await (await import('../config/client-settings.js')).withSentKey(settings, io.env, { management: opts.management, signal: io.interrupt });
  } catch (err) {
    throw err instanceof (await import('../config/key-source.js')).KeyUnavailableError ? new CliError(err.message, EXIT.AUTH) : err;
  }
}

/**
 * A default of the settings (what `speak` and `embed` take when their flag is left out): a model id
 * from the environment or a profile must look like one, as a --model flag must; the error names where it came from.
 */
export function checkedDefault(settings: Settings, key: 'model' | 'speechModel' | 'embedModel' | 'voice'): string | undefined {
  const value = settings[key];
  const from = settings.from[key];
  if (value === undefined || key === 'voice' || (from?.kind !== 'env' && from?.kind !== 'profile')) return value;
  return checkModel(value, from.kind === 'profile' ? `the ${sourceName(from)}` : sourceName(from));
}

/**
 * A refused key (401) is named as the key that was sent (the management key, where the command
 * sends it) and where it came from, so that the one to fix is the one named.
 */
export function refusedKeyHint(settings: Settings, opts: ConnectOptions = {}): string {
  const management = opts.management && settings.from.managementKey !== undefined;
  const what = management ? 'management key' : 'API key';
  const from = management ? settings.from.managementKey : settings.from.apiKey;
  const check =
    from?.kind === 'profile' || from?.kind === 'keychain'
      ? `of profile "${from.name}"${from.kind === 'keychain' ? ', in the keychain' : ''}: router config set ${from.field} --profile ${from.name}`
      : from?.kind === 'command'
        ? `that ${sourceName(from)} prints`
        : from
          ? `in ${sourceName(from)}`
          : '';
  return ` (check the ${what}${check ? ` ${check}` : ''})`;
}

/**
 * A route for management keys that refused the key sent (403: a standard key; 401: not valid), as a
 * CliError (exit 3) naming which key it was and how to set one; any other failure as it is.
 */
export function managementRefusal(err: unknown, settings: Settings, what: string): unknown {
  if (!(err instanceof APIError) || (err.status !== 403 && err.status !== 401)) return err;
  const which = !settings.managementKey ? 'this is the standard API key' : err.status === 401 ? 'the management key is not valid' : 'the management key was refused';
  return new CliError(`${what} a management key (${which}): export ROUTER_MANAGEMENT_KEY=…, or printf %s "$KEY" | router config set management_key`, EXIT.AUTH);
}

export function addKeyHint(err: unknown, settings: Settings, opts: ConnectOptions = {}): void {
  if (!(err instanceof APIError) || err.status !== 401 || (err as { hint?: unknown }).hint !== undefined) return;
  Object.assign(err, { hint: refusedKeyHint(settings, opts) });
}

/** A timeout says which wait it was: the --timeout given, or the default one that flag changes. */
export function addTimeoutHint(err: unknown, flags: GlobalFlags, timeoutMs: number): void {
  addRetryAfterTimeoutHint(err);
  if (!(err instanceof TimeoutError) || / \(.*--timeout.*\)$/.test(err.message)) return;
  const s = flags.timeout;
  const wait = s === undefined ? `the default --timeout, ${timeoutMs / 1000}s` : `--timeout ${s < 1 ? `${Math.round(s * 1000)}ms` : `${Number(s.toFixed(3))}s`}`;
  Object.defineProperty(err, 'message', { value: `${err.message} (${wait})`, configurable: true, writable: true });
}

/** A Retry-After longer than the request timeout names the flag that sets that timeout. */
function addRetryAfterTimeoutHint(err: unknown): void {
  if (!(err instanceof APIError) || !err.message.includes(': longer than the request timeout, ')) return;
  const message = err.message.replace(/: longer than the request timeout, ([\d.]+s), so no retry\)/, ': longer than --timeout $1, so no retry; a longer --timeout waits for it)');
  Object.defineProperty(err, 'message', { value: message, configurable: true, writable: true });
}

/** A transient failure given up on after retries says so, and how to have more. */
export function addRetryHint(err: unknown): void {
  const n = (err as { retries?: unknown } | null)?.retries;
  if (typeof n !== 'number' || !(err instanceof Error) || /--max-retries/.test(err.message)) return;
  Object.defineProperty(err, 'message', { value: `${err.message} (after ${n} ${n === 1 ? 'retry' : 'retries'}; --max-retries sets how many)`, configurable: true, writable: true });
}

/** A voice the service refused that was not typed (ROUTER_VOICE, a profile's voice) is named by where it came from. */
export function addVoiceHint(err: unknown, settings: Settings, typed: boolean): void {
  const { voice } = settings;
  const from = settings.from.voice;
  if (typed || !voice || !from || !(err instanceof APIError) || err.status !== 400 || (err as { hint?: unknown }).hint !== undefined) return;
  if (err.message.includes(`"${voice}"`)) Object.assign(err, { hint: ` (from ${sourceName(from)})` });
}

/**
 * A root that cannot be reached (refused, unreachable) is named by where it came from, by one rule: --api-root, a
 * variable exported long ago, a profile's api_root (the default root, from nowhere, as it is). A proxy's failure is the proxy's.
 */
export async function addRootHint(err: unknown, settings: Settings, env: NodeJS.ProcessEnv): Promise<void> {
  // A proxy that failed is named by the variable that set it: the place to fix it.
  if (err instanceof ConnectionError && err.message.includes('the proxy ')) {
    const [{ DEFAULT_API_ROOT }, { proxyVariable }] = await Promise.all([import('../client/index.js'), import('../config/proxy.js')]);
    const name = proxyVariable(env, new URL(settings.apiRoot ?? DEFAULT_API_ROOT))?.[1];
    if (name) Object.defineProperty(err, 'message', { value: `${err.message} (the proxy from ${name})`, configurable: true, writable: true });
    return;
  }
  // The emulator's root, with the emulator gone (killed mid-loop, never started): the way out named.
  // A loopback root is never reached through a proxy (see config/proxy), so what refused is this machine.
  if (err instanceof ConnectionError && err.code === 'refused') {
    const [{ DEFAULT_API_ROOT }, { isLoopback }] = await Promise.all([import('../client/index.js'), import('../config/proxy.js')]);
    if (isLoopback(new URL(settings.apiRoot ?? DEFAULT_API_ROOT).hostname)) Object.defineProperty(err, 'message', { value: `${err.message}, on this machine: is router serve running?`, configurable: true, writable: true });
  }
  const from = settings.from.apiRoot;
  if (!from || !(err instanceof ConnectionError) || err.maybeDelivered || err instanceof TimeoutError || err instanceof ProxyRefusedError) return;
  Object.defineProperty(err, 'message', { value: `${err.message} (the API root from ${sourceName(from)})`, configurable: true, writable: true });
}

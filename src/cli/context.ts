import type { RouterClient } from '../client/index.js';
import type { Settings } from '../config/settings.js';
import { DEFAULT_ENV, type DefaultField } from '../config/fields.js';
import { CliError, EXIT } from './exit-codes.js';
import { checkModel } from './options.js';
import type { GlobalFlags, IO } from './io.js';

export interface Connected {
  client: RouterClient;
  settings: Settings;
}

export interface ConnectOptions {
  /** Use the management key (speech, decisions). */
  management?: boolean;
  model?: string;
}

/**
 * Builds the client from flags > env > profile. Call it only after the command's own input
 * is validated, so that bad input never costs a request.
 */
export async function connect(io: IO, flags: GlobalFlags, opts: ConnectOptions = {}): Promise<Connected> {
  // An unknown profile or a malformed API root is a SettingsError: reportError makes it a usage error.
  const { resolveSettings } = await import('../config/settings.js');
  const settings = await resolveSettings({ profile: flags.profile, apiRoot: flags.apiRoot, model: opts.model }, io.env);
  // A --model was checked as it was parsed; one from ROUTER_MODEL or a profile is checked here, before any request.
  if (opts.model === undefined) await checkDefault(io, settings.profile, 'model', settings.model);
  io.addSecret(settings.apiKey);
  io.addSecret(settings.managementKey);
  const key = opts.management ? (settings.managementKey ?? settings.apiKey) : settings.apiKey;
  if (!key) {
    throw new CliError(
      `no API key for profile "${settings.profile}": set ROUTER_API_KEY, or run "router login"`,
      EXIT.AUTH,
    );
  }
  const { RouterClient, DEFAULT_API_ROOT } = await import('../client/index.js');
  const proxy = (await import('../config/proxy.js')).proxyFromEnv(io.env, settings.apiRoot ?? DEFAULT_API_ROOT);
  const client = new RouterClient({
    apiKey: key,
    apiRoot: settings.apiRoot,
    timeoutMs: flags.timeout !== undefined ? flags.timeout * 1000 : undefined,
    maxRetries: flags.maxRetries,
    proxy,
    onRetry: ({ attempt, delayMs, reason }) => io.info(`retry ${attempt} in ${(delayMs / 1000).toFixed(1)}s: ${reason}`),
  });
  return { client, settings };
}

/**
 * What `speak` and `embed` take when their flag is left out: the environment's value (ROUTER_VOICE,
 * ROUTER_SPEECH_MODEL, ROUTER_EMBED_MODEL), else the profile's; checked before anything is sent.
 */
export async function settingDefault(io: IO, flags: GlobalFlags, field: Exclude<DefaultField, 'model'>): Promise<string | undefined> {
  const { resolveSettings } = await import('../config/settings.js');
  const settings = await resolveSettings({ profile: flags.profile, apiRoot: flags.apiRoot }, io.env);
  const value = { voice: settings.voice, speech_model: settings.speechModel, embed_model: settings.embedModel }[field];
  return checkDefault(io, settings.profile, field, value);
}

/** A model id from the environment or a profile must look like one, as a --model flag must; the error names where it came from. */
async function checkDefault(io: IO, profile: string, field: DefaultField, value: string | undefined): Promise<string | undefined> {
  if (value === undefined || field === 'voice') return value;
  const env = DEFAULT_ENV[field];
  const { fromEnv } = await import('../config/settings.js');
  return checkModel(value, fromEnv(io.env, env) ? env : `the ${field} of profile "${profile}"`);
}

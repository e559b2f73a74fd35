/** `router config init`: a profile set up by answering questions on a terminal. */
import { defineCommand } from '../../define.js';
import type { RunContext } from '../../run.js';
import type { FlagValues } from '../../flags/flags.js';
import { usage } from '../../exit-codes.js';
import { isModelId, MODEL_ID_SYNTAX } from '../../../client/facts.js';
import { WRITTEN_PROFILE_FLAGS } from '../../flags/setup-flags.js';
import { checkRoot, profileFor, sayStored, store } from './shared.js';
import { checkNewProfile } from '../../../config/fields.js';
import { KEY_SYNTAX } from '../../../config/settings.js';
import { ask } from '../../io/ask.js';
import type { IO } from '../../io/io.js';

export const init = defineCommand({
  name: 'init',
  summary: 'set up a profile interactively',
  description: 'set up a profile interactively: API root, API key and management key (both hidden; speak and decide need the management key) and default model',
  flags: WRITTEN_PROFILE_FLAGS,
  examples: ['router config init', 'router config init --profile local'],
  run: runInit,
});

/** Asks for the API root, the keys (hidden) and the default model, then writes the profile. */
async function runInit({ io, opts, flags }: RunContext<FlagValues<typeof WRITTEN_PROFILE_FLAGS>>): Promise<void> {
  if (!io.canPrompt) throw usage('config init asks questions and needs a terminal; use "router config set" or "router login --with-key" in scripts');
  const { input, password } = await import('@inquirer/prompts');
  const s = await store(io);
  const profile = profileFor(io, s, opts, flags);
  checkNewProfile(profile, s.names());
  const current = s.get(profile) ?? {};
  // The root of `router serve`'s exports, when they were pasted first: what this profile most likely wants.
  const envRoot = io.env.ROUTER_API_ROOT?.trim() || undefined;
  const apiRoot = await ask(io, input, { message: 'API root', default: current.api_root ?? envRoot ?? 'https://openrouter.ai/api', validate: (v) => { try { checkRoot(v); return true; } catch (e) { return (e as Error).message; } } });
  const keyStored = Boolean(current.api_key || current.api_key_keychain);
  // Asked again at once when empty with none stored: not refused after the questions that follow it.
  const key = await ask(io, password, { message: keyStored ? 'API key (empty keeps the stored one)' : 'API key', mask: '*', validate: (v) => (v.trim() ? KEY_SYNTAX.test(v.trim()) || 'a key is printable ASCII with no spaces' : keyStored || 'a profile needs an API key') });
  const management = await ask(io, password, { message: current.management_key || current.management_key_keychain ? 'Management key, for speak and decide (empty keeps the stored one)' : 'Management key, for speak and decide (empty for none)', mask: '*', validate: (v) => !v.trim() || KEY_SYNTAX.test(v.trim()) || 'a key is printable ASCII with no spaces' });
  const listed = knownModels(io, checkRoot(apiRoot), key.trim() || current.api_key);
  const model = await ask(io, input, {
    message: 'Default model (<author>/<slug>, empty for none)',
    default: current.model ?? '',
    validate: async (v) => v === '' || (isModelId(v) ? await notListed(v, apiRoot, await listed) : `must look like ${MODEL_ID_SYNTAX}`) || true,
  });
  s.set(profile, 'api_root', checkRoot(apiRoot));
  const { saveKey } = await import('../../../config/key-store.js');
  if (key.trim()) sayStored(io, await saveKey(s, profile, 'api_key', key.trim(), io.env, io.interrupt), profile, 'api_key', s.get(profile));
  if (management.trim()) sayStored(io, await saveKey(s, profile, 'management_key', management.trim(), io.env, io.interrupt), profile, 'management_key', s.get(profile));
  if (model) s.set(profile, 'model', model);
  if (!s.names().includes(s.current())) s.use(profile);
  io.info(`saved profile "${profile}" (${s.path})`);
}

/** The service's model list, fetched once with the key given (3 s at most); undefined when it cannot be had. */
async function knownModels(io: IO, apiRoot: string, apiKey: string | undefined): Promise<string[] | undefined> {
  if (!apiKey) return undefined;
  const [{ RouterClient }, { modelCatalog }, { proxyFromEnv }] = await Promise.all([import('../../../client/index.js'), import('../../service/model-catalog.js'), import('../../../config/proxy.js')]);
  const client = new RouterClient({ apiRoot, apiKey, maxRetries: 0, proxy: proxyFromEnv(io.env, apiRoot) });
  try {
    return (await modelCatalog(client, { env: io.env, apiRoot, signal: AbortSignal.timeout(3000) })).map((m) => m.id);
  } catch {
    return undefined;
  } finally {
    await client.close();
  }
}

/** A model the list does not hold is asked again, with the nearest id. */
async function notListed(id: string, apiRoot: string, ids: string[] | undefined): Promise<string | undefined> {
  if (!ids || ids.includes(id)) return undefined;
  const near = (await import('../../service/model-hint.js')).nearestModel(id, ids);
  return `${id} is not a model of ${apiRoot}${near ? `: did you mean ${near}?` : ''} (router models lists them; empty for none)`;
}

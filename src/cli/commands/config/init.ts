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

export const init = defineCommand({
  name: 'init',
  summary: 'set up a profile interactively: API root, API key and management key (both hidden; speak and decide need the management key) and default model',
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
  const apiRoot = await ask(io, input, { message: 'API root', default: current.api_root ?? 'https://openrouter.ai/api', validate: (v) => { try { checkRoot(v); return true; } catch (e) { return (e as Error).message; } } });
  const key = await ask(io, password, { message: current.api_key || current.api_key_keychain ? 'API key (empty keeps the stored one)' : 'API key', mask: '*', validate: (v) => !v.trim() || KEY_SYNTAX.test(v.trim()) || 'a key is printable ASCII with no spaces' });
  const management = await ask(io, password, { message: current.management_key || current.management_key_keychain ? 'Management key, for speak and decide (empty keeps the stored one)' : 'Management key, for speak and decide (empty for none)', mask: '*', validate: (v) => !v.trim() || KEY_SYNTAX.test(v.trim()) || 'a key is printable ASCII with no spaces' });
  const model = await ask(io, input, { message: 'Default model (<author>/<slug>, empty for none)', default: current.model ?? '', validate: (v) => v === '' || isModelId(v) || `must look like ${MODEL_ID_SYNTAX}` });
  if (!key.trim() && !current.api_key && !current.api_key_keychain) throw usage('no API key given');
  s.set(profile, 'api_root', checkRoot(apiRoot));
  const { saveKey } = await import('../../../config/key-store.js');
  if (key.trim()) sayStored(io, await saveKey(s, profile, 'api_key', key.trim(), io.env, io.interrupt), profile, 'api_key', s.get(profile));
  if (management.trim()) sayStored(io, await saveKey(s, profile, 'management_key', management.trim(), io.env, io.interrupt), profile, 'management_key', s.get(profile));
  if (model) s.set(profile, 'model', model);
  if (!s.names().includes(s.current())) s.use(profile);
  io.info(`saved profile "${profile}" (${s.path})`);
}

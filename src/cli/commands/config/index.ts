/** `router config`: named profiles (keys, API root, default models), kept in a private file. */
import { defineGroup } from '../../define.js';
import { FIELDS } from './shared.js';
import { init } from './init.js';
import { get, set, unset } from './settings.js';
import { list, path, remove, use } from './profiles.js';

export const config = defineGroup({
  name: 'config',
  summary: 'manage profiles: API key, API root, default model',
  description: 'Manage named profiles. Keys are stored in a private (0600) file and are never printed in full.',
  commands: [init, set, get, unset, list, use, remove, path],
  notes: `Settings: ${FIELDS.join(', ')}
Precedence: flags (--profile, --api-root, --model, --voice) > environment (ROUTER_PROFILE,
ROUTER_API_KEY, ROUTER_MANAGEMENT_KEY, ROUTER_API_ROOT, ROUTER_MODEL, ROUTER_VOICE,
ROUTER_SPEECH_MODEL, ROUTER_EMBED_MODEL) > the profile. model is chat's and responses';
speak takes voice and speech_model, embed takes embed_model.`,
  examples: ['router config set api_root "$ROUTER_API_ROOT"', 'router config set api_key < key.txt', 'router config set voice alloy', 'router config list --json'],
});

/** `router config`: named profiles (keys, API root, default models), kept in a private file. */
import { defineGroup } from '../../define.js';
import { FIELDS } from './shared.js';
import { init } from './init.js';
import { get, set, unset } from './settings.js';
import { list, path, remove, use } from './profiles.js';

export const config = defineGroup({
  name: 'config',
  summary: 'manage profiles: API key, API root, default model',
  description:
    "Manage named profiles. Keys are kept in the operating system's keychain where there is one, else in the private (0600) config file, or given by a command (api_key_command, management_key_command); never printed in full. See docs/keys.md.",
  commands: [init, set, get, unset, list, use, remove, path],
  notes: `Settings: ${FIELDS.join(', ')}
Precedence: flags (--profile, --api-root, --model, --voice) > environment (ROUTER_PROFILE, ROUTER_API_KEY, ROUTER_MANAGEMENT_KEY, ROUTER_API_ROOT, ROUTER_MODEL, ROUTER_VOICE, ROUTER_SPEECH_MODEL, ROUTER_EMBED_MODEL, ROUTER_MCP) > the profile. model is chat's and responses'; speak takes voice and speech_model, embed takes embed_model; mcp (MCP servers, one a line) is chat's and responses' (--mcp or a role's mcp replaces it: docs/tools.md).
Keys: api_key_command (a command whose stdout is the key, run when it is needed) > the keychain > the file; ROUTER_KEYCHAIN=off keeps new keys in the file; router auth migrate moves file keys into the keychain. See docs/keys.md.`,
  examples: ['router config set api_root "$ROUTER_API_ROOT"', 'router config set api_key < key.txt', 'router config set voice alloy', 'router config list --json'],
});

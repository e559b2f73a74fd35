/**
 * The environment variables router reads (test/inprocess/newcomer-silent.test.ts keeps the list whole):
 * a `ROUTER_*` variable that is none of them, yet close to one, is most likely a typo left unread. And the notes
 * router says as it reads the settings: the CLI on stderr (src/cli/context.ts), clientFromProfile to its onNote.
 */
import { ATTRIBUTION_ENV, BATCHES_PATH_ENV, BUDGET_ENV, DEFAULT_ENV, KEY_ENV, MCP_ENV } from './fields.js';
import { closest } from '../internal/did-you-mean.js';
import { switchUnclear } from '../internal/env-switch.js';
import type { Settings } from './settings.js';

export const ENV_NAMES: readonly string[] = [
  ...Object.values(KEY_ENV), 'ROUTER_API_ROOT', 'ROUTER_PROFILE', ...Object.values(DEFAULT_ENV), ...Object.values(BUDGET_ENV), MCP_ENV,
  ...Object.values(ATTRIBUTION_ENV), BATCHES_PATH_ENV, 'ROUTER_NO_LOG', 'ROUTER_NO_STDIN',
  'ROUTER_NO_INPUT', 'ROUTER_KEYCHAIN', 'ROUTER_CONFIG_DIR', 'ROUTER_STATE_DIR', 'ROUTER_PROXY_TIMEOUT',
  // Of the build, the bench and the tests.
  'ROUTER_TRAIN_CODE_CACHE', 'ROUTER_TRACE_START', 'ROUTER_ONLY', 'ROUTER_EMULATOR_CRASH_AFTER_WRITES', 'ROUTER_EMULATOR_CRASH_AT',
];

/** The switches (src/internal/env-switch.ts): on for 1, true or yes; off for 0, false, no, empty. */
const SWITCHES = ['ROUTER_NO_LOG', 'ROUTER_NO_STDIN', 'ROUTER_NO_INPUT'];

/**
 * A note for each `ROUTER_*` variable router does not read that is close to one it does, and for a
 * switch set to a value it reads as off without its saying so (`ROUTER_NO_STDIN=on`).
 */
export function mistypedEnv(env: NodeJS.ProcessEnv): string[] {
  const switches = SWITCHES.filter((k) => switchUnclear(env[k])).map((k) => `note: ${k}=${JSON.stringify(env[k])} is read as off (1, true or yes turns it on)`);
  return switches.concat(Object.keys(env)
    .filter((k) => k.startsWith('ROUTER_') && !ENV_NAMES.includes(k))
    .flatMap((k) => {
      const meant = closest(k, ENV_NAMES, 2);
      return meant ? [`note: router reads no ${k}: did you mean ${meant}? (it is left unread)`] : [];
    }));
}

/** The notes of reading `settings` from `env`: the mistyped variables, and the fields of a profile named on purpose that a variable goes before. */
export function settingsNotes(settings: Pick<Settings, 'profile' | 'overridden'>, env: NodeJS.ProcessEnv): string[] {
  const lines = mistypedEnv(env);
  const over = settings.overridden;
  if (over?.length) lines.push(`note: the environment goes before profile "${settings.profile}" for ${over.map((o) => `${o.field} (${o.env})`).join(', ')}: unset ${over.length > 1 ? 'those' : 'it'} to use the profile's`);
  return lines;
}

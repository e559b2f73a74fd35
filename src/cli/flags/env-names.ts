/**
 * The environment variables router reads (test/inprocess/newcomer-silent.test.ts keeps the list whole):
 * a `ROUTER_*` variable that is none of them, yet close to one, is most likely a typo left unread.
 */
import { ATTRIBUTION_ENV, BATCHES_PATH_ENV, BUDGET_ENV, DEFAULT_ENV, KEY_ENV, MCP_ENV } from '../../config/fields.js';
import { closest } from '../../internal/did-you-mean.js';
import { switchUnclear } from '../../internal/env-switch.js';

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

/** Other tools' names for the key that router reads as ROUTER_API_KEY: the first one set, where router found no key. */
const OTHER_KEY_NAMES = ['OPENROUTER_API_KEY', 'OPENAI_API_KEY'];

/** Where no key was found and another tool's key variable is set: that it is not read and how to pass it ('' if none is set). */
export function otherToolsKey(env: NodeJS.ProcessEnv): string {
  const name = OTHER_KEY_NAMES.find((n) => env[n]?.trim());
  return name ? ` (${name} is set, and not read: router's is ROUTER_API_KEY, as in export ROUTER_API_KEY="$${name}")` : '';
}

/**
 * The environment variables router reads (test/unit/env-names.test.ts keeps the list whole): a
 * `ROUTER_*` variable that is none of them, yet close to one, is most likely a typo left unread.
 */
import { closest } from '../../internal/did-you-mean.js';

export const ENV_NAMES = [
  'ROUTER_API_KEY', 'ROUTER_MANAGEMENT_KEY', 'ROUTER_API_ROOT', 'ROUTER_PROFILE', 'ROUTER_MODEL', 'ROUTER_VOICE',
  'ROUTER_SPEECH_MODEL', 'ROUTER_EMBED_MODEL', 'ROUTER_DAILY_BUDGET', 'ROUTER_MONTHLY_BUDGET', 'ROUTER_MCP',
  'ROUTER_APP_URL', 'ROUTER_APP_TITLE', 'ROUTER_APP_CATEGORIES', 'ROUTER_BATCHES_PATH', 'ROUTER_NO_LOG', 'ROUTER_NO_STDIN',
  'ROUTER_NO_INPUT', 'ROUTER_KEYCHAIN', 'ROUTER_CONFIG_DIR', 'ROUTER_STATE_DIR', 'ROUTER_PROXY_TIMEOUT',
  // Of the build, the bench and the tests.
  'ROUTER_TRAIN_CODE_CACHE', 'ROUTER_TRACE_START', 'ROUTER_ONLY', 'ROUTER_EMULATOR_CRASH_AFTER_WRITES',
] as const;

/** A note for each `ROUTER_*` variable router does not read that is close to one it does. */
export function mistypedEnv(env: NodeJS.ProcessEnv): string[] {
  const known: readonly string[] = ENV_NAMES;
  return Object.keys(env)
    .filter((k) => k.startsWith('ROUTER_') && !known.includes(k))
    .flatMap((k) => {
      const meant = closest(k, known, 2);
      return meant ? [`note: router reads no ${k}: did you mean ${meant}? (it is left unread)`] : [];
    });
}

/** Other tools' names for the key that router reads as ROUTER_API_KEY: the first one set, where router found no key. */
const OTHER_KEY_NAMES = ['OPENROUTER_API_KEY', 'OPENAI_API_KEY'];

/** Where no key was found and another tool's key variable is set: that it is not read and how to pass it ('' if none is set). */
export function otherToolsKey(env: NodeJS.ProcessEnv): string {
  const name = OTHER_KEY_NAMES.find((n) => env[n]?.trim());
  return name ? ` (${name} is set, and not read: router's is ROUTER_API_KEY, as in export ROUTER_API_KEY="$${name}")` : '';
}

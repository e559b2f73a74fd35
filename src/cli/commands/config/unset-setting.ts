/** What `config get` says of a setting no profile holds: its default, where router has one, and how it is set. */
import { DEFAULT_API_ROOT } from '../../../client/core.js';
import { LOG_DEFAULT } from '../../../config/fields.js';
import { ENV_OF, SECRET, type Field } from './shared.js';

/** Where router itself has a value for a setting no profile or variable holds. */
const DEFAULTS: Partial<Record<Field, string>> = { api_root: DEFAULT_API_ROOT, log: LOG_DEFAULT };

/** How a setting is given a value beyond `router config set` and its variable. */
const OTHER_WAYS: Partial<Record<Field, string>> = {
  api_key: 'router login',
  log: 'ROUTER_NO_LOG=1 or --no-log turn it off',
  batches_path: 'unset, it is found out from the service and kept per API root',
};

/** " (its default is X; …)": the end of "F is not set in profile P". */
export function whenUnset(f: Field): string {
  const set = SECRET.includes(f) ? `printf %s "$KEY" | router config set ${f}` : `router config set ${f} ${f === 'log' ? 'on|off' : 'VALUE'}`;
  const ways = [set, ENV_OF[f] ? `${ENV_OF[f]} goes before it` : '', OTHER_WAYS[f] ?? ''].filter(Boolean);
  const fallback = DEFAULTS[f];
  return `${fallback === undefined ? '' : `: its default is ${fallback}`} (${ways.join('; ')})`;
}

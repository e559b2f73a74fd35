/** `router api -H name:value`: the headers given, checked; a credential among them is a secret of the run. */
import { credentialsIn } from '../../client/credentials.js';
import { checkHeaders } from '../../client/request-checks.js';
import { usage } from '../exit-codes.js';
import type { IO } from '../io/io.js';

/**
 * The headers of `-H` (names in lower case); each credential one carries (a header whose name says it holds one:
 * `authorization`, `x-api-key`) is hidden from then on as a profile's key is: in what the server echoes, on stdout and stderr.
 */
export function headersOf(io: IO, list: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list) {
    const at = h.indexOf(':');
    if (at <= 0) throw usage(`-H ${JSON.stringify(h)}: give name:value`);
    out[h.slice(0, at).trim().toLowerCase()] = h.slice(at + 1).trim();
  }
  checkHeaders(out);
  for (const credential of credentialsIn(out)) io.addSecret(credential);
  return out;
}

import { randomBytes } from 'node:crypto';

// A gateway names itself in the `Via` header of what it sends upstream (RFC 9110 7.6.3). A request that
// comes back to it bearing its own name went round a loop: a provider's base_url pointing at the gateway
// itself. Refused at once, the loop ends there; followed, each hop made the next, without end.

/** This gateway's own name in `Via`, new for each gateway started. */
export function viaName(): string {
  return `router-gateway-${randomBytes(6).toString('hex')}`;
}

/** The `Via` header a gateway sends upstream. */
export function viaHeader(name: string): string {
  return `1.1 ${name}`;
}

/** Whether a request's `Via` header names this gateway: it sent the request itself. */
export function cameBack(via: string | string[] | undefined, name: string): boolean {
  return via !== undefined && (typeof via === 'string' ? via.includes(name) : via.some((v) => v.includes(name)));
}

const GATEWAY_IN_VIA = /1\.1 router-gateway-[0-9a-f]{12}\b/g;
/** At most this many gateways are passed on: a chain longer than any loop a person sets up. */
const MOST_PASSED_ON = 32;

/**
 * The gateways a request came through, as its `Via` names them, to be passed on before this gateway's own
 * name, so a loop through other gateways comes back to one that finds its name. Only gateways' names: the
 * rest of a caller's `Via` (its proxies) does not go upstream, as no other header of the caller does.
 */
export function gatewaysBefore(via: string | string[] | undefined): string | undefined {
  if (via === undefined) return undefined;
  const names = (typeof via === 'string' ? via : via.join(', ')).match(GATEWAY_IN_VIA);
  return names ? names.slice(-MOST_PASSED_ON).join(', ') : undefined;
}

export const LOOP_MESSAGE =
  'Loop detected: this gateway sent this request itself (its Via header names it): a provider in the providers file has a base_url that points back at this gateway; give that provider the upstream\'s own URL';

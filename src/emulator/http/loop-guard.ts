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

export const LOOP_MESSAGE =
  'Loop detected: this gateway sent this request itself (its Via header names it): a provider in the providers file has a base_url that points back at this gateway; give that provider the upstream\'s own URL';

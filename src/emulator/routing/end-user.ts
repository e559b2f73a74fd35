import { createHash } from 'node:crypto';

/**
 * The caller's end-user identifier as a provider sees it: folded into a hashed identity, never the raw
 * value (spec, Authentication). The same user is the same hash on every run, so a cassette recorded
 * with it still matches on replay.
 */
export const endUser = (user: string): string => `user-${createHash('sha256').update(`router end user\n${user}`).digest('hex').slice(0, 32)}`;

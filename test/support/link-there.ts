import { lstatSync } from 'node:fs';

/**
 * Whether there is anything at `path`, a link included: existsSync follows a link, and a lock's (a pid, a lock's
 * text) points nowhere, so that it reads false with the lock there.
 */
export function linkThere(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

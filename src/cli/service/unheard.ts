import { ConnectionError, ProtocolError } from '../../client/errors.js';

/**
 * A request that changes something, whose answer was lost or cut (or, with `unreadable`, not
 * understood), may have been carried out: its error says so and `then` says how to tell.
 */
export function unheardError(err: unknown, then: string, unreadable: boolean): unknown {
  if ((unreadable && err instanceof ProtocolError) || (err instanceof ConnectionError && err.maybeDelivered)) err.message += `; ${then}`;
  return err;
}

/** `call`, with its error as unheardError says it. */
export async function unheard<T>(call: Promise<T>, then: string, unreadable: boolean): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw unheardError(err, then, unreadable);
  }
}

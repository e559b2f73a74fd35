import { ServerResponse, type IncomingMessage } from 'node:http';

const endNow = ServerResponse.prototype.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/**
 * Responses whose end waits for the charges made before it to be written (`unwritten`: the
 * store's journal, written off the event loop): a charge is on disk before the answer it pays for
 * ends, as when it was written on the loop, and no answer ends showing a balance a kill -9 could
 * take back. Writes before the end, the other streams', go on meanwhile.
 */
export function answersAfterCharges(unwritten: () => Promise<void> | undefined): typeof ServerResponse<IncomingMessage> {
  return class AnswerAfterCharges extends ServerResponse<IncomingMessage> {
    override end(...args: unknown[]): this {
      const pending = unwritten();
      if (!pending) return endNow.apply(this, args) as this;
      void pending.then(() => endNow.apply(this, args));
      return this;
    }
  };
}

import { ServerResponse, type IncomingMessage } from 'node:http';

const endNow = ServerResponse.prototype.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/**
 * Responses whose end first writes the charges made before it (`flush`: the store's journal, whose
 * lines wait to be written together): a charge is on disk before the answer it pays for ends, and no
 * answer ends showing a balance a kill -9 could take back.
 */
export function answersAfterCharges(flush: () => void): typeof ServerResponse<IncomingMessage> {
  return class AnswerAfterCharges extends ServerResponse<IncomingMessage> {
    override end(...args: unknown[]): this {
      flush();
      return endNow.apply(this, args) as this;
    }
  };
}

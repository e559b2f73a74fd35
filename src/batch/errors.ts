/**
 * The one error the batch engine throws of its own (besides the client's): a message for a person
 * and a reason a caller can act on. The CLI maps each reason to an exit code in src/cli/errors.ts.
 */
export type BatchErrorReason =
  /** The input, or what was asked of it, is wrong; nothing was sent. */
  | 'invalid'
  /** No such batch, job or results (deleted after the retention). */
  | 'not_found'
  /** The batch's finalized cost exceeds the balance: its results wait for credits. */
  | 'payment'
  /** Another process runs this job. */
  | 'busy'
  /** A job record that cannot be read. */
  | 'damaged'
  /** The batch has not ended: it has no results yet. */
  | 'not_ended'
  /** The fate of a create is unknown (its answer was lost), or the service stopped answering. */
  | 'network';

export class BatchError extends Error {
  override readonly name = 'BatchError';
  constructor(
    message: string,
    readonly reason: BatchErrorReason,
    /** Several problems, each a line of its own (the message joins them). */
    readonly lines?: string[],
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new BatchError(message, 'invalid');

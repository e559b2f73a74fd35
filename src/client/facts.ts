import type { BatchEndpoint, BatchStatus } from './types.js';

/*
 * Facts of the API that the CLI checks before sending, stated once. The emulator keeps its own
 * copies on purpose: it is the independent side that the conformance suite checks these against.
 */

export const BATCH_ENDPOINTS: readonly BatchEndpoint[] = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'];
export const TERMINAL_BATCH_STATUSES: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];
/** `finalizing` and `cancelling` are stored as `in_progress`, so they cannot be filtered on. */
export const LISTABLE_BATCH_STATUSES = ['validating', 'in_progress', 'completed', 'failed', 'expired', 'cancelled'] as const;
export const UNLISTABLE_BATCH_STATUSES: readonly BatchStatus[] = ['finalizing', 'cancelling'];

/** The spec's 200 MB per batch (200,000,000 bytes: MB, not MiB) and the 5,000 requests the service documents. */
export const BATCH_MAX_BYTES = 200_000_000;
export const BATCH_MAX_REQUESTS = 5000;
/** A request body (a batch item's too) nested deeper than this is refused (the emulator's bound: docs/conformance.md). */
export const MAX_JSON_DEPTH = 64;

/** Model identifiers are `<author>/<slug>`: no spaces or control characters, at most MODEL_ID_MAX characters (the longest listed are under 80). */
export const MODEL_ID_SYNTAX = '<author>/<slug>';
export const MODEL_ID_MAX = 256;
const MODEL_ID = /^[^/\s\x00-\x1f\x7f-\x9f]+\/[^/\s\x00-\x1f\x7f-\x9f]+$/;
export function isModelId(value: string): boolean {
  return value.length <= MODEL_ID_MAX && MODEL_ID.test(value);
}

export const isTerminalBatchStatus = (status: string): boolean => (TERMINAL_BATCH_STATUSES as readonly string[]).includes(status);

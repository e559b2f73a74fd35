/**
 * A batch create answered 404 where batches_path (or ROUTER_BATCHES_PATH) sends it: that API root keeps no
 * batches there (a path set for the deployed service, then a `router serve` of api.md's shape). A create's 404
 * made no batch and names no batch id, so the setting is the one cause left to name, with how to drop it.
 */
import { APIError } from '../../client/errors.js';
import { sourceName, type Settings } from '../../config/settings.js';

export function addBatchesPathHint(err: unknown, settings: Settings): void {
  const from = settings.from.batchesPath;
  if (!(err instanceof APIError) || err.status !== 404 || !from || !settings.batchesPath || (err as { hint?: unknown }).hint !== undefined) return;
  if (!err.message.startsWith('POST ') || !err.message.includes(`${settings.batchesPath}:`)) return;
  const drop = from.kind === 'env' ? `unset ${from.name}` : from.kind === 'profile' ? `router config unset batches_path${from.name === 'default' ? '' : ` --profile ${from.name}`}` : 'leave it out';
  Object.assign(err, { hint: ` (batches are sent to ${settings.batchesPath} as ${sourceName(from)} says; this API root has none there: ${drop}, and router finds where it keeps them)` });
}

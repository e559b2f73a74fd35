import { createHash } from 'node:crypto';

/**
 * The UUID the API names a workspace by (the OpenAPI's `workspace_id`, `format: uuid`), made from the
 * store's own name for it (`default`, or one the emulator's admin route gave) as a UUID v5 is: the same
 * on every start, so state files keep their names and old ones load. Made once per workspace.
 */
const uuids = new Map<string, string>();
export function workspaceUuid(workspace: string): string {
  let uuid = uuids.get(workspace);
  if (uuid !== undefined) return uuid;
  const h = createHash('sha1').update(`router-emulator-workspace:${workspace}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.toString('hex', 0, 16);
  uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  if (uuids.size < 10_000) uuids.set(workspace, uuid);
  return uuid;
}

/** Whether a `workspace_id` a caller sent names `workspace`: its UUID, or its store name (as earlier versions said it). */
export const namesWorkspace = (given: unknown, workspace: string): boolean => given === workspace || (typeof given === 'string' && given.toLowerCase() === workspaceUuid(workspace));

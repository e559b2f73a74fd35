import { HttpError, type Access, type Ctx, type Handler } from './http.js';
import type { Store } from '../state/store-api.js';
import { keyRefusal } from '../state/key-usage.js';
import { noRoute } from './openapi-unserved.js';
import { cutText } from '../../internal/first-words.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One route: `METHOD path` (`:name` marks a path parameter), who may call it, and its handler. */
export interface Route {
  method: Method;
  path: string;
  access: Access;
  handler: Handler;
  /** Another format's route (Anthropic's messages): the header its key may come in besides a Bearer one… */
  keyHeader?: string;
  /** …and what shapes its every answer, set before its key is checked (its refusals too). */
  shape?: (ctx: Ctx) => void;
}

/**
 * A resource's routes, the one way to register one: a table made from the parts of the server it
 * needs (none for most). Each resource file exports one; server.ts collects them all.
 */
export function defineRoutes<Parts = object>(table: (parts: Parts) => Route[]): (parts: Parts) => Route[] {
  return table;
}

interface Compiled extends Route {
  pattern: RegExp;
  names: string[];
}

export interface Match extends Pick<Route, 'handler' | 'access' | 'keyHeader' | 'shape'> {
  params: Record<string, string>;
}

/** The emulator's routing table, built once from the resources' tables. */
export class Routes {
  private readonly routes: Compiled[] = [];
  /** The routes with a shape of their own (few: a request looks through these only). */
  private readonly shaped: Compiled[] = [];

  constructor(routes: Route[]) {
    const seen = new Set<string>();
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key)) throw new Error(`emulator route ${key} is registered twice`);
      seen.add(key);
      const names: string[] = [];
      const pattern = new RegExp(`^${route.path.replace(/:(\w+)/g, (_, n: string) => (names.push(n), '([^/]+)'))}$`);
      this.routes.push({ ...route, pattern, names });
      if (route.shape) this.shaped.push(this.routes.at(-1)!);
    }
  }

  /**
   * What shapes the answers on `path` (its route's own, or the shaped route it lies under, any method): a path
   * no route serves under another format's route (`/v1/messages/count_tokens`) is refused in that format too.
   */
  shapeOf(path: string): ((ctx: Ctx) => void) | undefined {
    return this.shaped.find((r) => (r.pattern.test(path) || path.startsWith(`${r.path}/`)))?.shape;
  }

  /** A 404 for no such path, a 405 for a path without that method, a 400 for a malformed escape. */
  find(method: string, path: string): Match {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      allowed.push(route.method);
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.names.forEach((n, i) => (params[n] = decodePart(m[i + 1]!)));
      return { handler: route.handler, access: route.access, keyHeader: route.keyHeader, shape: route.shape, params };
    }
    if (allowed.length) throw new HttpError(405, `Method ${method} not allowed on ${path}`, undefined, { allow: allowed.join(', ') });
    throw noRoute(method, path);
  }
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `malformed percent-escape in the path: ${JSON.stringify(cutText(part, 40))}`, 'invalid_request');
  }
}

/** Bearer key of the workspace; a route for management keys refuses the others with 403. */
export function authenticate(ctx: Ctx, store: Store, access: Access, keyHeader?: string): void {
  const auth = ctx.header('authorization');
  const other = auth ? undefined : keyHeader && ctx.header(keyHeader);
  if (!auth && !other) throw new HttpError(401, 'Missing Authentication header', 'authentication');
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : undefined;
  const record = m ? store.findKey(m[1]!) : other ? store.findKey(other.trim()) : undefined;
  if (!record) throw new HttpError(401, 'Invalid API key', 'authentication');
  const refused = keyRefusal(record, store.now());
  if (refused) throw new HttpError(401, refused, 'authentication');
  if (access === 'operator' && record.kind !== 'operator') {
    throw new HttpError(403, 'Only the emulator operator key (printed by router serve) can perform this operation', 'permission_denied');
  }
  if (record.kind === 'operator' && access !== 'operator' && access !== 'admin') {
    throw new HttpError(403, 'The operator key belongs to no workspace: use a workspace key', 'permission_denied');
  }
  if ((access === 'management' || access === 'admin') && record.kind === 'standard') {
    throw new HttpError(403, 'Only management keys can perform this operation', 'permission_denied');
  }
  ctx.key = record;
}

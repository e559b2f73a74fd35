import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Routes, defineRoutes, type Route } from '../../src/emulator/http/routes.js';
import { HttpError } from '../../src/emulator/http/http.js';

const handler = async () => {};
const route = (method: Route['method'], path: string): Route => ({ method, path, access: 'any', handler });

describe('emulator routes: one way to register one', () => {
  it('builds the table from the resources\' tables, and refuses a route registered twice', () => {
    const batches = defineRoutes(() => [route('GET', '/v1/batches'), route('GET', '/v1/batches/:id')]);
    const again = defineRoutes(() => [route('GET', '/v1/batches/:id')]);
    expect(() => new Routes([...batches({}), ...again({})])).toThrow('emulator route GET /v1/batches/:id is registered twice');
    const routes = new Routes([...batches({}), route('POST', '/v1/batches')]);
    expect(routes.find('GET', '/v1/batches/batch%2Fx').params).toEqual({ id: 'batch/x' });
    expect(routes.find('POST', '/v1/batches').access).toBe('any');
  });

  it('answers 405 for a known path without that method, 404 for an unknown path, 400 for a bad escape', () => {
    const routes = new Routes([route('GET', '/v1/batches/:id')]);
    const status = (method: string, path: string) => {
      try {
        routes.find(method, path);
        return 200;
      } catch (err) {
        return (err as HttpError).status;
      }
    };
    expect([status('DELETE', '/v1/batches/b1'), status('GET', '/v1/nothing'), status('GET', '/v1/batches/%E0%A4%A')]).toEqual([405, 404, 400]);
  });

  it('a 405 names the methods the path has in Allow, as HTTP asks', () => {
    const routes = new Routes([route('GET', '/v1/batches/:id'), route('DELETE', '/v1/batches/:id'), route('POST', '/v1/batches')]);
    const err = (() => {
      try {
        routes.find('PUT', '/v1/batches/b1');
      } catch (e) {
        return e as HttpError;
      }
    })();
    expect(err).toMatchObject({ status: 405, headers: { allow: 'GET, DELETE' } });
  });

  it('is registered in one place: server.ts builds the only Routes, from tables made with defineRoutes', () => {
    const dir = join(__dirname, '../../src/emulator');
    const sources = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => [f, readFileSync(join(dir, f), 'utf8')] as const);
    expect(sources.filter(([, text]) => text.includes('new Routes(')).map(([f]) => f)).toEqual(['server.ts']);
    const tables = sources.filter(([, text]) => /export const \w+Routes = defineRoutes\(/.test(text)).map(([f]) => f);
    expect(tables.sort()).toEqual(['batches/batches.ts', 'resources/account.ts', 'resources/admin.ts', 'resources/analytics.ts', 'resources/chat.ts', 'resources/decisions.ts', 'resources/embeddings.ts', 'resources/generation-content.ts', 'resources/generations.ts', 'resources/keys.ts', 'resources/messages.ts', 'resources/model-endpoints.ts', 'resources/providers.ts', 'resources/responses.ts', 'resources/speech.ts']);
  });
});

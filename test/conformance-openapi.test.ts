import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestEnv } from './helpers.js';
import { startCliEnv } from './support/cli-env.js';
import { formatTable, type Row } from './conformance/checks.js';
import { accountAnswers, CHECKED_ROUTES, NOT_IN_OPENAPI, openApiRoutes, serves } from './conformance/openapi-answers.js';
import { NOT_SERVED } from '../src/emulator/http/openapi-unserved.js';

// The routes of the official OpenAPI that the emulator serves: each is checked against it (here or
// in conformance.test.ts); each route it serves that the OpenAPI lacks is listed with the reason.
let t: TestEnv;
beforeAll(async () => {
  // The emulator in this process: the checks use only what both environments have.
  t = (await startCliEnv()) as unknown as TestEnv;
});
afterAll(() => t.close());

it('every emulator route the OpenAPI describes is checked against it; the others are listed', async () => {
  const described = openApiRoutes();
  const served: string[] = [];
  for (const route of described) if (await serves(t, route)) served.push(route);
  expect(served.sort()).toEqual(Object.keys(CHECKED_ROUTES).sort());
  for (const route of Object.keys(NOT_IN_OPENAPI)) {
    expect(described, route).not.toContain(route);
    expect(await serves(t, route), route).toBe(true);
  }
});

it('every route of the OpenAPI it does not serve is listed as such, and answers a 404 that says so', async () => {
  const unserved = openApiRoutes().filter((route) => !(route in CHECKED_ROUTES));
  const listed = Object.entries(NOT_SERVED).flatMap(([path, methods]) => methods.split(' ').map((m) => `${m} ${path.replace(/:id/g, 'x')}`));
  expect(listed.sort()).toEqual(unserved.sort());
  for (const route of unserved) {
    const [method, path] = route.split(' ') as [string, string];
    const res = await fetch(`${t.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${t.managementKey}` } });
    // Before: a bare "No route for GET /v1/providers".
    expect([res.status, ((await res.json()) as { error: { message: string } }).error.message], route).toEqual([404, `No route for ${route}: the service's OpenAPI has it; router serve does not serve it`]);
  }
  // Any other path is the bare 404 it was.
  const other = await fetch(`${t.apiRoot}/v1/nothing/here`, { headers: { authorization: `Bearer ${t.managementKey}` } });
  expect(((await other.json()) as { error: { message: string } }).error.message).toBe('No route for GET /v1/nothing/here');
});

it('the account routes answer as the OpenAPI says, and the client asks them as it allows', async () => {
  const rows: Row[] = [];
  await accountAnswers(t, (operation, check) => {
    const r: Row = { operation, check, checked: 0, failed: 0, failures: [] };
    rows.push(r);
    return r;
  });
  for (const r of rows) expect(r.checked, `${r.operation}: ${r.check}`).toBeGreaterThan(0);
  expect(rows.filter((r) => r.failed > 0), formatTable(rows)).toEqual([]);
});

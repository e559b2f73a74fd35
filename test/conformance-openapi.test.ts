import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestEnv } from './helpers.js';
import { startCliEnv } from './support/cli-env.js';
import { formatTable, type Row } from './conformance/checks.js';
import { accountAnswers, CHECKED_ROUTES, NOT_IN_OPENAPI, openApiRoutes, serves } from './conformance/openapi-answers.js';

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

it('the account routes answer as the OpenAPI says, and the client asks them as it allows', async () => {
  const rows: Row[] = [];
  await accountAnswers(t, (operation, check) => {
    const r: Row = { operation, check, checked: 0, failed: 0, failures: [] };
    rows.push(r);
    return r;
  });
  for (const r of rows) expect(r.checked, `${r.operation}: ${r.check}`).toBeGreaterThan(0);
  expect(rows.filter((r) => r.failed > 0), formatTable(rows)).toEqual([]);
}, 60_000);

import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './helpers.js';
import { formatTable, runConformance } from './conformance/checks.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

it('requests and answers conform to the official OpenAPI description and SDK', async () => {
  const rows = await runConformance(t);
  const table = formatTable(rows);
  for (const r of rows) expect(r.checked, `${r.operation}: ${r.check}`).toBeGreaterThan(0);
  expect(rows.filter((r) => r.failed > 0), table).toEqual([]);
}, 120_000);

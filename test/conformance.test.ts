import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestEnv } from './helpers.js';
import { startCliEnv, type CliEnv } from './support/cli-env.js';
import { formatTable, runConformance } from './conformance/checks.js';

// The commands run in process (`npm run conformance` spawns the binary for the same checks).
let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
});
afterAll(() => t.close());

it('requests and answers conform to the official OpenAPI description and SDK', async () => {
  // The checks use only what both environments have: run, requests, admin, keys, root, folder.
  const rows = await runConformance(t as unknown as TestEnv);
  const table = formatTable(rows);
  for (const r of rows) expect(r.checked, `${r.operation}: ${r.check}`).toBeGreaterThan(0);
  expect(rows.filter((r) => r.failed > 0), table).toEqual([]);
}, 120_000);

import { describe, expect, it } from 'vitest';
import type { TestEnv } from './helpers.js';
import { startCliEnv } from './support/cli-env.js';
import { formatTable, runConformance } from './conformance/checks.js';
import { startedForAll } from './support/for-all.js';

// The commands run in process (`npm run conformance` spawns the binary for the same checks).
// Both shapes of the emulator: api.md's (batches listed under /v1) and the deployed service's.
describe.each(['spec', 'deployed'] as const)('flavour %s', (flavor) => {
  const t = startedForAll(() => startCliEnv({ flavor }));

  it('requests and answers conform to the official OpenAPI description and SDK', async () => {
    // The checks use only what both environments have: run, requests, admin, keys, root, folder.
    const rows = await runConformance(t as unknown as TestEnv, flavor);
    const table = formatTable(rows);
    for (const r of rows) expect(r.checked, `${r.operation}: ${r.check}`).toBeGreaterThan(0);
    expect(rows.filter((r) => r.failed > 0), table).toEqual([]);
    if (flavor === 'deployed') expect(rows.filter((r) => r.check.startsWith('deployed:')).length).toBe(4);
    // A backstop, not a speed goal: the first flavour compiles the OpenAPI's validators (in this process), which at load
    // 30 took past 120 s.
  }, 300_000);
});

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runProcess } from '../support/run-process.js';

// The OpenAPI description is kept parsed and its validators compiled between runs (test/conformance/openapi-fixtures.ts),
// named by the YAML they came from: what was kept for another YAML is removed when the current one is kept, not left
// to grow with each change of the YAML.
const cache = mkdtempSync(join(tmpdir(), 'router-openapi-cache-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

it('keeping the current YAML\'s forms removes those of an older YAML', async () => {
  const stale = ['openapi-1-1.json', 'validator-0000000000000000-0000000000000000.cjs'];
  for (const name of stale) writeFileSync(join(cache, name), '{}');
  const fixtures = join(import.meta.dirname, '../conformance/openapi-fixtures.ts');
  const script = `import(${JSON.stringify(fixtures)}).then((m) => { m.openApiDoc(); m.schemaValidator('ChatStreamChunk'); })`;
  const r = await runProcess(process.execPath, ['--import', 'tsx', '-e', script], { env: { ...process.env, ROUTER_TEST_OPENAPI_CACHE: cache } });
  expect(r.status, r.stderr).toBe(0);
  const kept = readdirSync(cache);
  for (const name of stale) expect(kept).not.toContain(name);
  expect(kept.filter((name) => /^openapi-\d+-\d+\.json$/.test(name))).toHaveLength(1);
  expect(kept.filter((name) => /^validator-[0-9a-f]{16}-[0-9a-f]{16}\.cjs$/.test(name))).toHaveLength(1);
});

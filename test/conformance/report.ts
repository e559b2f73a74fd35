// npm run conformance: prints, per operation, how many shapes were checked and how many failed,
// then how many rules of the spec are traced to a test and how many are untested.
import { startTestEnv } from '../helpers.js';
import { formatTable, runConformance } from './checks.js';
import { readTrace, traceProblems } from './trace.js';

let failed = false;
// Both shapes of the emulator: api.md's (batches listed under /v1) and the deployed service's (/beta, no listing).
for (const flavor of ['spec', 'deployed'] as const) {
  const t = await startTestEnv({ flavor });
  try {
    const rows = await runConformance(t, flavor);
    console.log(`\n## flavour ${flavor}\n${formatTable(rows)}`);
    failed ||= rows.some((r) => r.failed > 0);
  } finally {
    await t.close();
  }
}
const { rows: rules } = readTrace();
const problems = traceProblems();
const untested = rules.filter((r) => r.found.length === 0).length;
console.log(`\nspec rules: ${rules.length}, traced to a test: ${rules.length - untested}, untested: ${untested}`);
for (const p of problems) console.log(`    ${p}`);
process.exitCode = failed || problems.length > 0 ? 1 : 0;

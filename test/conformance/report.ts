// npm run conformance: prints, per operation, how many shapes were checked and how many failed,
// then how many rules of the spec are traced to a test and how many are untested.
import { startTestEnv } from '../helpers.js';
import { formatTable, runConformance } from './checks.js';
import { readTrace, traceProblems } from './trace.js';

const t = await startTestEnv();
try {
  const rows = await runConformance(t);
  console.log(formatTable(rows));
  const { rows: rules } = readTrace();
  const problems = traceProblems();
  const untested = rules.filter((r) => r.found.length === 0).length;
  console.log(`\nspec rules: ${rules.length}, traced to a test: ${rules.length - untested}, untested: ${untested}`);
  for (const p of problems) console.log(`    ${p}`);
  process.exitCode = rows.some((r) => r.failed > 0) || problems.length > 0 ? 1 : 0;
} finally {
  await t.close();
}

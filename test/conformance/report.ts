// npm run conformance: prints, per operation, how many shapes were checked and how many failed.
import { startTestEnv } from '../helpers.js';
import { formatTable, runConformance } from './checks.js';

const t = await startTestEnv();
try {
  const rows = await runConformance(t);
  console.log(formatTable(rows));
  process.exitCode = rows.some((r) => r.failed > 0) ? 1 : 0;
} finally {
  await t.close();
}

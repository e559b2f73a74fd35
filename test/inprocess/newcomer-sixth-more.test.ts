import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 6, more: what the sixth newcomer pass found and left.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const line = (id: string, text: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: text }] } });

it('batch run --json prints the summed cost of its shards as the decimal it is, a number', async () => {
  const input = join(t.dir, 'costs.jsonl');
  writeFileSync(input, Array.from({ length: 7 }, (_, i) => line(`r${i}`, `hello number ${i} some words`)).join('\n'));
  const r = await run(['batch', 'run', input, '--model', 'local/lorem', '--json', '--watch', '--interval', '0.05', '--max-requests', '2']);
  expect(r.code, r.stderr).toBe(0);
  const job = JSON.parse(r.stdout) as { id: string; shards: { usage: { cost: number } }[]; totals: { cost: number } };
  const floatSum = job.shards.reduce((sum, s) => sum + s.usage.cost, 0);
  // The shards' costs summed in floating point carry noise (0.00024625000000000005): what was printed before.
  expect(String(floatSum)).toMatch(/\d{15,}/);
  expect(job.totals.cost).toBe(Number(floatSum.toFixed(10)));
  expect(r.stdout).toContain(`"cost":${Number(floatSum.toFixed(10))}}`);
  expect(r.stdout).not.toMatch(/"cost":-?\d*\.\d{14,}/);
  // The job's record, listed, sums the same way.
  const jobs = await run(['batch', 'jobs', '--json']);
  expect((JSON.parse(jobs.stdout) as { totals: { cost: number } }[])[0]!.totals.cost).toBe(job.totals.cost);
});

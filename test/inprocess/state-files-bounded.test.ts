import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// Issue 45, item 9, the rest of its class: the files router keeps in its state folder (where batches
// live, the local batch index, budget holds, a job's record) are read with a bound, only when regular.
// Each a link to /dev/zero: before, each read grew memory without end; now each is passed over.
const t = startedForAll(() => startCliEnv({ flavor: 'deployed' }));

it('a link to /dev/zero as batch-places.json, batches.jsonl or a budget hold is passed over, not read', async () => {
  const state = t.env.ROUTER_STATE_DIR!;
  mkdirSync(join(state, 'budget-holds'), { recursive: true });
  mkdirSync(join(state, 'jobs', 'job_zero'), { recursive: true });
  for (const name of ['batch-places.json', 'batches.jsonl', join('budget-holds', '999999-zero.json'), join('jobs', 'job_zero', 'job.json')]) symlinkSync('/dev/zero', join(state, name));
  const requests = join(t.dir, 'zero-state.jsonl');
  writeFileSync(requests, JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'a' }] } }));
  // The place is found again (the deployed flavour's /beta/batches), the budget counts what it can read.
  const created = await t.run(['batch', 'create', requests, '--model', 'local/echo'], { env: { ROUTER_DAILY_BUDGET: '5' } });
  expect(created.stderr).not.toMatch(/internal error/);
  expect(created.code, created.stderr).toBe(0);
  const list = await t.run(['batch', 'list', '--json']);
  expect(list.code, list.stderr).toBe(0);
  const job = await t.run(['batch', 'job', 'job_zero']);
  expect(job.code).not.toBe(0);
  // Not "no job": a record is there and cannot be read (said by the kept files' rule).
  expect(job.stderr).toBe(`error: the record of job_zero ${join(state, 'jobs', 'job_zero', 'job.json')}: cannot read it (not a regular file (a device, a FIFO or a socket)); nothing of the job is sent or written until it can be read\n`);
});

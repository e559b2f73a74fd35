/**
 * Numbers a person reads: every stderr line of `router batch run` groups thousands ("1,200"), as its
 * watch line did; the data on stdout and in --json stays plain numbers. Before, the job line read
 * "1200 requests in 3 shards", the merge line "1200 results in input order" and the dry run
 * "1200 requests", beside a watch line's "1,200".
 */
import { expect, it } from 'vitest';
import { expectMerged, newSpace, requestsFile } from '../support/batch-jobs.js';
import { join } from 'node:path';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

it('batch run says 1,200 in every line it writes for a person; its JSON says 1200', async () => {
  const s = await newSpace(t, 'grouped');
  const file = requestsFile(t.dir, 'twelve-hundred.jsonl', 1200, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }] }));
  const dry = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '500', '--dry-run', '--json'], { env: s.env });
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stderr).toMatch(/^dry run: 1,200 requests in 3 shards checked; nothing was saved or sent$/m);
  expect(JSON.parse(dry.stdout).requests).toBe(1200);
  const create = await t.run(['batch', 'create', file, '--model', 'local/echo', '--dry-run'], { env: s.env });
  expect(create.code, create.stderr).toBe(0);
  expect(create.stderr).toMatch(/^dry run: 1,200 requests to \/v1\/chat\/completions with local\/echo checked; nothing was sent$/m);
  // The dry run's answer, a sentence on stderr (its --json carries the number): the line batch run --dry-run says.
  expect(create.stdout).toBe('');
  expect(create.stderr).toMatch(/^cost bound: local\/echo: 1,200 requests, at most /m);

  const out = join(t.dir, 'twelve-hundred-out.jsonl');
  // --verbose: the status lines a terminal gets, piped.
  const r = await t.run(['--verbose', 'batch', 'run', file, '--model', 'local/echo', '--max-requests', '500', '--watch', '--interval', '0.05', '--results', out], { env: s.env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/^job job_\w+: 1,200 requests in 3 shards$/m);
  expect(r.stderr).toMatch(/^job_\w+: shards \d\/3 · requests [\d,]+ completed, \d+ failed of 1,200 /m);
  expect(r.stderr).toMatch(/^1,200 results in input order$/m);
  expect(r.stderr).not.toMatch(/\b1200\b/);
  expectMerged(out, 1200);
});

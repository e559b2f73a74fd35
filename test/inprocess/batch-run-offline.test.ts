import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { batchesPathOf, FLAVORS } from '../support/batch-jobs.js';

// `batch run --watch --offline-timeout`: the follow keeps polling through a service that does not
// answer for a while, as `batch create --watch` does; without the flag the first failure stops it.
let t: InProcessEnv;
let n = 0;
let BP = '/v1/batches';

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(() => {
    BP = batchesPathOf(flavor);
  });
  beforeAll(async () => {
    t = await startInProcessEnv({ flavor });
  });
  afterAll(() => t.close());
  afterEach(() => t.admin('faults', { faults: [] }));

  /** A job started (submitted, not followed) from a file of its own. */
  async function startedJob(): Promise<string> {
    const file = join(t.dir, `offline-${++n}.jsonl`);
    writeFileSync(file, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `o${i + 1}`, body: { messages: [{ role: 'user', content: `job ${n} line ${i + 1}` }] } })).join('\n') + '\n');
    const started = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '2']);
    expect(started.code).toBe(0);
    return started.stdout.trim();
  }

  describe('batch run --watch --offline-timeout', () => {
    it('polls through connection resets and ends the job (exit 0), saying it polls again', async () => {
      const id = await startedJob();
      await t.admin('faults', { faults: [`reset,times=3,path=${BP},method=GET`] });
      const r = await t.run(['--verbose', '--max-retries', '0', 'batch', 'run', '--resume', id, '--watch', '--interval', '50ms', '--offline-timeout', '60']);
      expect(r.stderr).toMatch(new RegExp(`${id}: .*; polling again in \\d+s`));
      expect(r.stderr).not.toMatch(/^error:/m);
      expect(r.code).toBe(0);
      const job = JSON.parse((await t.run(['batch', 'job', id, '--json'])).stdout);
      expect(job.totals).toMatchObject({ finished: 2, completed: 4, failed: 0 });
    });

    it('past the timeout: exit 8, the job saved, and the command to take it up names the timeout', async () => {
      const id = await startedJob();
      await t.admin('faults', { faults: [`reset,times=1000,path=${BP},method=GET`] });
      const r = await t.run(['--max-retries', '0', 'batch', 'run', '--resume', id, '--watch', '--interval', '50ms', '--offline-timeout', '1']);
      expect(r.code).toBe(8);
      expect(r.stderr).toMatch(/^error: no answer from the service for \ds \(/m);
      expect(r.stderr).toContain(`stopped; ${id} is saved and its batches keep running. Resume with: router batch run --resume ${id} --watch --interval 0.05 --offline-timeout 1\n`);
    });

    it('a service that answers wrongly (malformed, 503) stops the follow the same way: the job saved, the command to take it up', async () => {
      for (const [fault, code, said] of [
        // Followed by the listing (spec) or batch by batch (deployed): either answer is unreadable.
        [`malformed,path=${BP},method=GET`, 7, /^error: server sent (malformed JSON|a malformed batch)/m],
        [`503,times=1000,path=${BP},method=GET`, 7, /^error: .*503/m],
      ] as const) {
        const id = await startedJob();
        await t.admin('faults', { faults: [fault] });
        const r = await t.run(['--max-retries', '0', 'batch', 'run', '--resume', id, '--watch', '--interval', '50ms']);
        expect(r.code, r.stderr).toBe(code);
        expect(r.stderr).toContain(`stopped; ${id} is saved and its batches keep running. Resume with: router batch run --resume ${id} --watch --interval 0.05\nerror: `);
        expect(r.stderr).toMatch(said);
        await t.admin('faults', { faults: [] });
        expect((await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '50ms'])).code).toBe(0);
      }
    });

    it('goes with --watch or --results only', async () => {
      const r = await t.run(['batch', 'run', '--resume', 'job_20260101_abcdef01', '--offline-timeout', '60']);
      expect(r.stderr).toBe('error: --offline-timeout goes with --watch or --results\n');
      expect(r.code).toBe(2);
    });
  });
});

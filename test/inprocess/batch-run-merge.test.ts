import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { batchesPathOf, FLAVORS } from '../support/batch-jobs.js';

// The merge downloads each shard's results: a download cut mid-body is read again (an idempotent
// GET, retried as any other), so one dropped connection does not fail a finished job.
let t: InProcessEnv;
let input: string;
let BP = '/v1/batches';

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startInProcessEnv({ flavor });
    BP = batchesPathOf(flavor);
    input = join(t.dir, 'requests.jsonl');
    writeFileSync(input, Array.from({ length: 12 }, (_, i) => JSON.stringify({ custom_id: `r${i + 1}`, body: { messages: [{ role: 'user', content: `question ${i + 1}` }] } })).join('\n') + '\n');
    const r = await t.run(['batch', 'run', input, '--model', 'local/echo', '--max-requests', '4', '--watch', '--interval', '50ms']);
    expect(r.code).toBe(0);
  });
  afterAll(() => t.close());

  const cutResults = (times: number) => t.admin('faults', { faults: [`cut,after=2,times=${times},path=${BP}/batch_,method=GET`] });
  const merge = (out: string) => t.run(['--max-retries', '2', 'batch', 'run', input, '--model', 'local/echo', '--max-requests', '4', '--results', join(t.dir, out)]);

  describe('batch run --results when a download of results is cut', () => {
    it('reads it again: every line once, in input order, exit 0', async () => {
      await cutResults(2);
      const r = await merge('cut.jsonl');
      expect(r.stderr).not.toMatch(/error/);
      expect(r.code).toBe(0);
      const ids = readFileSync(join(t.dir, 'cut.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).custom_id);
      expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => `r${i + 1}`));
    });

    it('past --max-retries it is a connection error (exit 8) and no partial file', async () => {
      await cutResults(3);
      const r = await merge('gave-up.jsonl');
      expect(r.stderr).toMatch(/^error: the stream was cut before it was complete/m);
      expect(r.code).toBe(8);
      expect(() => readFileSync(join(t.dir, 'gave-up.jsonl'))).toThrow();
      await t.admin('faults', { faults: [] });
    });
  });

  describe('batch run --watch when the service stops answering', () => {
    it('exits 8 saying the job is saved and the command that takes it up', async () => {
      const other = join(t.dir, 'other.jsonl');
      writeFileSync(other, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `o${i + 1}`, body: { messages: [{ role: 'user', content: `other ${i + 1}` }] } })).join('\n') + '\n');
      const started = await t.run(['batch', 'run', other, '--model', 'local/echo']);
      expect(started.code).toBe(0);
      const id = started.stdout.trim();
      await t.admin('faults', { faults: [`reset,times=5,path=${BP},method=GET`] });
      const r = await t.run(['--max-retries', '0', 'batch', 'run', '--resume', id, '--watch', '--interval', '50ms']);
      await t.admin('faults', { faults: [] });
      expect(r.code).toBe(8);
      expect(r.stderr).toContain(`stopped; ${id} is saved and its batches keep running. Resume with: router batch run --resume ${id} --watch --interval 0.05\n`);
      const resumed = await t.run(['batch', 'run', '--resume', id!, '--watch', '--interval', '50ms']);
      expect(resumed.code).toBe(0);
    });
  });
});

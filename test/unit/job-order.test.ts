import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJob } from '../../src/batch/job/run.js';
import { listJobs } from '../../src/batch/job/store.js';

// `batch jobs` and the job a re-run takes up follow the order jobs were made in, even within one second.
let dir: string;
let env: NodeJS.ProcessEnv;
let input: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'job-order-'));
  env = { ROUTER_STATE_DIR: join(dir, 'state') };
  input = join(dir, 'requests.jsonl');
  writeFileSync(input, JSON.stringify({ custom_id: 'r1', body: { model: 'local/echo', messages: [{ role: 'user', content: 'q' }] } }) + '\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the order of jobs', () => {
  it('is the order of making, newest first, however many are made in one second', async () => {
    const made: string[] = [];
    for (let i = 0; i < 12; i++) {
      const held = await openJob({ input, fresh: true, env });
      held.release();
      made.push(held.job.id);
    }
    expect(listJobs(env).map((j) => j.id)).toEqual([...made].reverse());
    // A re-run of the file takes up the latest of them.
    const again = await openJob({ input, env });
    again.release();
    expect(again.job.id).toBe(made.at(-1));
  });

  it('still reads records of older versions (no seq), by created_at', () => {
    const old = (id: string, created_at: number) => {
      mkdirSync(join(env.ROUTER_STATE_DIR!, 'jobs', id), { recursive: true });
      const job = { ...listJobs(env)[0]!, id, created_at, seq: undefined };
      writeFileSync(join(env.ROUTER_STATE_DIR!, 'jobs', id, 'job.json'), JSON.stringify(job));
    };
    old('job_19700101_aaaa', 10);
    old('job_19700101_bbbb', 20);
    const ids = listJobs(env).map((j) => j.id);
    expect(ids.slice(-2)).toEqual(['job_19700101_bbbb', 'job_19700101_aaaa']);
  });
});

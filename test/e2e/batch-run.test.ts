/**
 * `router batch run`: jobs bigger than one batch, through the real binary against the emulator,
 * including kill -9 at every phase and exactly-once submission.
 */
import { describe, expect, it } from 'vitest';
import { expectExactlyOnce as expectExactlyOnceIn, expectMerged, jobsIn, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startTestEnv } from '../helpers.js';
import { waitForState } from '../support/until.js';
import { killedNine } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv({ batchDelayMs: 5 }));

const space = (credits?: number) => newSpace(t, 'jobs', credits);
const input = (name: string, count: number, body: (i: number) => object = (i) => ({ messages: [{ role: 'user', content: `line ${i}` }] })) => requestsFile(t.dir, name, count, body);
const faults = (s: Space, specs: string[]) => setFaults(t, s, specs);
const jobs = jobsIn;
const expectExactlyOnce = (s: Space, job: any) => expectExactlyOnceIn(t, s, job);

const readlinkSafe = (p: string) => {
  try {
    return readlinkSync(p);
  } catch {
    return '';
  }
};

describe('kill -9 at any point: resumed, every shard submitted exactly once', () => {
  const run = (s: Space, file: string, out: string) => t.spawn(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3', '--watch', '--interval', '0.05', '--results', out], s.env);
  const finish = async (s: Space, file: string, out: string) => {
    const r = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3', '--watch', '--interval', '0.05', '--results', out], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/resuming job_\w+|job job_\w+/);
  };

  it('during a create (the upload is held), between creates, and while watching', async () => {
    for (const phase of ['create', 'between', 'watching'] as const) {
      const s = await space();
      const file = input(`kill-${phase}.jsonl`, 10);
      const out = join(t.dir, `kill-${phase}-out.jsonl`);
      // The create held until the kill (a 2 s hold could be over before a loaded machine looked at the job file).
      if (phase === 'create') await faults(s, ['slow,delay_ms=600000,times=1,path=/v1/batches,method=POST']);
      // Two creates answered, the third held until the kill: "shard 1 made, shard 3 not yet" lasts however slow the
      // machine (back to back the creates take milliseconds, less than one look at the job file; 250 ms each were
      // passed at load 30).
      if (phase === 'between') await faults(s, ['slow,delay_ms=250,times=2,path=/v1/batches,method=POST', 'slow,delay_ms=600000,path=/v1/batches,method=POST']);
      const child = run(s, file, out);
      await waitForState(() => {
        const job = jobs(s)[0];
        if (!job) return false;
        if (phase === 'create') return job.shards[0].submitting !== undefined;
        if (phase === 'between') return !!job.shards[1].batch_id && !job.shards[3].batch_id;
        return job.shards.every((x: any) => x.batch_id);
      }, phase);
      await killedNine(child);
      await faults(s, []);
      await finish(s, file, out);
      expectMerged(out, 10);
      expect(jobs(s)).toHaveLength(1);
      await expectExactlyOnce(s, jobs(s)[0]);
    }
  });

  it('while splitting (reading the input, before the job record exists): the next run plans it once', async () => {
    const s = await space();
    // Long enough to read that the run is caught reading it (~5 MB): few lines of long prompts, so the
    // emulator answers 4,000 requests, not 40,000 as with short ones.
    const file = input('split.jsonl', 4_000, (i) => ({ messages: [{ role: 'user', content: `line ${i} ${'x'.repeat(1200)}` }] }));
    const out = join(t.dir, 'split-out.jsonl');
    await t.admin('batches', { delay_ms: 0 });
    try {
      const child = t.spawn(['batch', 'run', file, '--model', 'local/echo'], s.env);
      // Killed once it has the input open (Linux: /proc/PID/fd), which happens only while splitting.
      const reading = () => {
        try {
          return readdirSync(`/proc/${child.pid}/fd`).some((fd) => readlinkSafe(`/proc/${child.pid}/fd/${fd}`) === file);
        } catch {
          return false;
        }
      };
      await waitForState(reading, 'the input to be opened');
      await killedNine(child);
      expect(jobs(s)).toEqual([]);
      const r = await t.run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.1', '--results', out], { env: s.env });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await t.admin('batches', { delay_ms: 5 });
    }
    expect(jobs(s)).toHaveLength(1);
    await expectExactlyOnce(s, jobs(s)[0]);
    expect(readFileSync(out, 'utf8').split('\n').length).toBe(4_001);
  });

  it('killed at random points in a loop of runs: nothing missing, nothing twice', async () => {
    const s = await space();
    const file = input('random.jsonl', 16);
    const out = join(t.dir, 'random-out.jsonl');
    mkdirSync(s.state, { recursive: true });
    for (let i = 0; i < 10; i++) {
      const child = run(s, file, out);
      await new Promise((r) => setTimeout(r, 40 + Math.floor(Math.random() * 260)));
      await killedNine(child);
    }
    await finish(s, file, out);
    expectMerged(out, 16);
    expect(jobs(s)).toHaveLength(1);
    await expectExactlyOnce(s, jobs(s)[0]);
  });
});

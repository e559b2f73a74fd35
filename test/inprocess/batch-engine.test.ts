import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { BatchError, runJob, type JobEvents } from '../../src/batch/index.js';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { FLAVORS } from '../support/batch-jobs.js';

// The job engine as a program uses it: no command line, events instead of stderr, an AbortSignal.
let t: InProcessEnv;
let client: RouterClient;
let env: NodeJS.ProcessEnv;

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startInProcessEnv({ flavor });
    client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.emu.apiRoot, maxRetries: 0 });
    // The state folder `router` uses in these tests: a job made here is the CLI's too.
    env = { ROUTER_STATE_DIR: join(t.dir, 'cli-state') };
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  let n = 0;
  function input(count: number): string {
    const file = join(t.dir, `engine-${++n}.jsonl`);
    writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ custom_id: `e${i + 1}`, body: { messages: [{ role: 'user', content: `file ${n} line ${i + 1}` }] } })).join('\n') + '\n');
    return file;
  }
  const batchCount = async () => flavor === 'deployed' ? t.emu.batches.store.all().length : ((await t.call('GET', '/v1/batches?limit=100')).json.data.length as number);

  describe('runJob', () => {
    it('submits, follows and merges in input order, telling each step; the CLI sees the job', async () => {
      const heard: string[] = [];
      const chunks: Buffer[] = [];
      const on: JobEvents = {
        started: (job) => heard.push(`started ${job.shards.length}`),
        submitted: (_job, shard) => heard.push(`submitted ${shard.index}`),
        progress: (_job, _line, phase) => void (phase !== 'poll' && heard.push(phase)),
        settled: () => heard.push('settled'),
      };
      const outcome = await runJob(client, { input: input(5), model: 'local/echo', maxRequests: 2, interval: 0.05, env, on, results: { write: (c) => void chunks.push(c) } });
      expect(heard).toEqual(['started 3', 'submitted 0', 'submitted 1', 'submitted 2', 'start', 'end', 'settled']);
      expect(outcome).toMatchObject({ failed: 0, merged: { lines: 5, failed: 0 }, totals: { shards: 3, finished: 3, completed: 5 } });
      expect(Buffer.concat(chunks).toString().trim().split('\n').map((l) => JSON.parse(l).custom_id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
      const shown = await t.run(['batch', 'job', outcome.job.id, '--json']);
      expect(JSON.parse(shown.stdout).totals).toMatchObject({ finished: 3, completed: 5 });
    });

    it('stopped by its signal after one create: the job is saved, and taken up it sends the rest once', async () => {
      const file = input(4);
      const before = await batchCount();
      const stop = new AbortController();
      let stopped = '';
      const err = await runJob(client, { input: file, model: 'local/echo', maxRequests: 2, env, signal: stop.signal, on: { submitted: () => stop.abort(), stopped: (job) => (stopped = job.id) } }).catch((e: Error) => e);
      expect((err as Error).name).toBe('AbortError');
      expect(stopped).toMatch(/^job_/);
      expect(await batchCount()).toBe(before + 1);
      const resumed = await runJob(client, { resume: stopped, watch: true, interval: 0.05, env });
      expect(resumed.totals).toMatchObject({ shards: 2, finished: 2, completed: 4 });
      expect(await batchCount()).toBe(before + 2);
      // The same file again is the same job: nothing is sent.
      const again = await runJob(client, { input: file, model: 'local/echo', maxRequests: 2, env });
      expect(again.job.id).toBe(stopped);
      expect(await batchCount()).toBe(before + 2);
    });

    it('a file with bad lines: BatchError "invalid", one line per problem, nothing sent', async () => {
      const file = join(t.dir, 'bad.jsonl');
      writeFileSync(file, '{"custom_id":"a","body":{}}\nnot json\n{"custom_id":"a","body":{}}\n');
      const before = await batchCount();
      const err = await runJob(client, { input: file, model: 'local/echo', env }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BatchError);
      expect((err as BatchError).reason).toBe('invalid');
      expect((err as BatchError).lines).toEqual([expect.stringMatching(/bad\.jsonl:2: not JSON/), expect.stringMatching(/bad\.jsonl:3: duplicate custom_id "a"/)]);
      expect(await batchCount()).toBe(before);
    });
  });
});

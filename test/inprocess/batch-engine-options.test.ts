import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { BatchError, listJobs, runJob, watchBatch, type RunJobOptions } from '../../src/batch/index.js';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { FLAVORS } from '../support/batch-jobs.js';

// A program's options are checked as the CLI checks its flags: refused before a job is saved or anything sent.
let t: InProcessEnv;
let client: RouterClient;
let env: NodeJS.ProcessEnv;
let file: string;

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startInProcessEnv({ flavor });
    client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.emu.apiRoot, maxRetries: 0 });
    env = { ROUTER_STATE_DIR: join(t.dir, 'options-state') };
    file = join(t.dir, 'options.jsonl');
    writeFileSync(file, ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, body: { model: 'local/echo', messages: [{ role: 'user', content: id }] } })).join('\n') + '\n');
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  const batchCount = async () => flavor === 'deployed' ? t.emu.batches.store.all().length : ((await t.call('GET', '/v1/batches?limit=100')).json.data.length as number);

  const refused: [string, Partial<RunJobOptions>, RegExp][] = [
    ['maxRequests 0', { maxRequests: 0 }, /^maxRequests must be a whole number from 1 to 5000, not 0$/],
    ['maxRequests -1', { maxRequests: -1 }, /maxRequests .* not -1$/],
    ['maxRequests 1.5', { maxRequests: 1.5 }, /maxRequests .* not 1\.5$/],
    ['maxRequests NaN', { maxRequests: NaN }, /maxRequests .* not NaN$/],
    // A string (from an unparsed setting) is named as one: "not 5" read as if 5 were refused.
    ['maxRequests "5"', { maxRequests: '5' as unknown as number }, /^maxRequests must be a whole number from 1 to 5000, not "5"$/],
    ['maxBytes NaN', { maxBytes: NaN }, /maxBytes .* not NaN$/],
    ['maxBytes over the service limit', { maxBytes: 1e12 }, /maxBytes .* not 1000000000000$/],
    ['a model that is not <author>/<slug>', { model: 'gpt-4o' }, /^model must look like <author>\/<slug>, not "gpt-4o"$/],
    ['an endpoint that is not a batch endpoint', { endpoint: '/v1/bogus' }, /^endpoint "\/v1\/bogus" is not a batch endpoint/],
    ['interval 0 (a poll without pause)', { interval: 0, watch: true }, /^interval must be a number of seconds over 0, not 0$/],
    ['interval -1', { interval: -1, watch: true }, /interval .* not -1$/],
    ['offlineTimeout NaN', { offlineTimeout: NaN, watch: true }, /offlineTimeout .* not NaN$/],
    // Were taken: the batches ran (and were paid for), then "TypeError: write is not a function".
    ['results given as a path', { results: 'out.jsonl' as never, watch: true }, /^results must be \{ write, format \}, write a function that takes each piece of the results, not "out\.jsonl"$/],
    ['results without write', { results: { format: 'numbered' } as never, watch: true }, /^results must be .* not an object without one$/],
    // Were "not object" (null), "not number" (5), "not an object without one" (a list), the format's JSON: now as every check names them.
    ['results null', { results: null as never, watch: true }, /^results must be .* not null$/],
    ['results 5', { results: 5 as never, watch: true }, /^results must be .* not 5$/],
    ['results a list', { results: [] as never, watch: true }, /^results must be .* not an array$/],
    ['results.format a list', { results: { write: () => undefined, format: ['numbered'] as never }, watch: true }, /^results\.format must be results, numbered or joined, not an array$/],
    ['results in a format there is none of', { results: { write: () => undefined, format: 'csv' as never }, watch: true }, /^results\.format must be results, numbered or joined, not "csv"$/],
  ];

  describe('runJob refuses options a program got wrong', () => {
    it.each(refused)('%s: an invalid BatchError; no job saved, no batch created', async (_name, options, message) => {
      const jobs = listJobs(env).length;
      const batches = await batchCount();
      const err = await runJob(client, { input: file, fresh: true, env, ...options }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BatchError);
      expect(err).toMatchObject({ reason: 'invalid', message: expect.stringMatching(message) });
      expect(listJobs(env).length).toBe(jobs);
      expect(await batchCount()).toBe(batches);
    });

    it('the same options in range run the job', async () => {
      const outcome = await runJob(client, { input: file, fresh: true, env, maxRequests: 2, maxBytes: 4096, endpoint: '/v1/chat/completions', interval: 0.05, offlineTimeout: 0, watch: true });
      expect(outcome.totals).toMatchObject({ shards: 2, completed: 3 });
    });

    it('watchBatch refuses an interval of 0 before it polls', async () => {
      const err = await watchBatch(client, 'batch_nosuch', { interval: 0 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ reason: 'invalid', message: 'interval must be a number of seconds over 0, not 0' });
    });

    it("resume keeps the job's own plan: another model, endpoint, provider or limits is refused, not ignored", async () => {
      const { job } = await runJob(client, { input: file, fresh: true, env, maxRequests: 2, watch: true, interval: 0.05 });
      const batches = await batchCount();
      for (const [options, said] of [
        [{ model: 'local/lorem' }, 'model (local/echo)'],
        [{ endpoint: '/v1/responses' }, 'endpoint (/v1/chat/completions)'],
        [{ provider: { only: ['x'] } }, 'provider ({})'],
        [{ maxRequests: 3 }, 'maxRequests (2)'],
        [{ maxBytes: 4096 }, 'maxBytes (200000000)'],
        [{ fresh: true }, 'fresh'],
      ] as const) {
        const err = await runJob(client, { resume: job.id, env, ...options } as RunJobOptions).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BatchError);
        expect(err).toMatchObject({ reason: 'invalid', data: { about: 'resume_with_plan', job: job.id } });
        expect((err as Error).message).toContain(said);
      }
      expect(await batchCount()).toBe(batches);
      // The job's own values, given again, are no change.
      expect((await runJob(client, { resume: job.id, env, model: 'local/echo', maxRequests: 2 })).job.id).toBe(job.id);
    });
  });
});

import { readFileSync, writeFileSync } from 'node:fs';
import { RouterClient } from '../../src/client/index.js';
import { runJob } from '../../src/batch/index.js';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// A job's batches live at the API root it made them at: the same file run against another root (the
// emulator first, then the service) is a job of its own there, and a job taken up elsewhere is refused.
let here: CliEnv;
let there: CliEnv;
let input: string;

beforeAll(async () => {
  [here, there] = await Promise.all([startCliEnv(), startCliEnv()]);
  input = join(here.dir, 'requests.jsonl');
  writeFileSync(input, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { messages: [{ role: 'user', content: c }] } })).join('\n') + '\n');
});
afterAll(async () => {
  await Promise.all([here.close(), there.close()]);
});

it('batch run of a file made into a job at one API root makes its own job at another; --resume there is refused', async () => {
  const first = await here.run(['batch', 'run', input, '--model', 'local/echo', '--watch', '--interval', '0.05']);
  expect(first.code).toBe(0);
  const job = /job (job_\w+):/.exec(first.stderr)![1]!;
  // The other emulator, with this one's state folder (its jobs): as one machine switching roots.
  const elsewhere = { ...there.env, ROUTER_STATE_DIR: here.env.ROUTER_STATE_DIR! };
  const before = there.requests().length;
  const resumed = await there.run(['batch', 'run', '--resume', job, '--watch'], { env: elsewhere });
  expect(resumed).toMatchObject({ code: 2, stdout: '' });
  expect(resumed.stderr).toBe(`error: ${job} was made at ${here.apiRoot}, where its batches are, not at ${there.apiRoot}: run it with --api-root ${here.apiRoot} (or the profile that has it), or run the file as another job here with --new\n`);
  expect(there.requests()).toHaveLength(before);
  // A record of an older version keeps no root: the local index's, where its batch was seen, is taken.
  const record = join(here.env.ROUTER_STATE_DIR!, 'jobs', job, 'job.json');
  const { api_root, ...older } = JSON.parse(readFileSync(record, 'utf8'));
  expect(api_root).toBe(here.apiRoot);
  writeFileSync(record, JSON.stringify(older));
  expect((await there.run(['batch', 'run', '--resume', job, '--watch'], { env: elsewhere })).stderr).toBe(resumed.stderr);
  expect(there.requests()).toHaveLength(before);
  const again = await there.run(['batch', 'run', input, '--model', 'local/echo', '--watch', '--interval', '0.05'], { env: elsewhere });
  expect(again.stderr).not.toMatch(/resuming/);
  expect(again.code).toBe(0);
  expect(/job (job_\w+):/.exec(again.stderr)![1]).not.toBe(job);
  // Back at the first root, the file's job there is taken up.
  expect((await here.run(['batch', 'run', input, '--model', 'local/echo', '--watch', '--interval', '0.05'])).stderr).toMatch(new RegExp(`^resuming ${job}, made from this file`));
});

it('one API root spelled another way (its scheme in capitals) is the same root: its job is taken up', async () => {
  const file = join(here.dir, 'spelled.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 's', body: { messages: [{ role: 'user', content: 's' }] } }) + '\n');
  const first = await here.run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05']);
  expect(first.code).toBe(0);
  const job = /job (job_\w+):/.exec(first.stderr)![1]!;
  const spelled = here.apiRoot.replace(/^http:/, 'HTTP:');
  const before = here.requests().length;
  const again = await here.run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05'], { env: { ROUTER_API_ROOT: spelled } });
  expect(again.stderr).toMatch(new RegExp(`^resuming ${job}, made from this file`));
  expect(again.code).toBe(0);
  expect(here.requests().slice(before).filter((r) => r.method === 'POST')).toEqual([]);
  const resumed = await here.run(['batch', 'run', '--resume', job, '--watch'], { env: { ROUTER_API_ROOT: spelled } });
  expect(resumed.stderr).not.toMatch(/was made at/);
  expect(resumed.code).toBe(0);
});

it("runJob at a root with a user name and password: none written to the job or the index, none in an error; the same service", async () => {
  const env = { ROUTER_STATE_DIR: join(here.dir, 'library-state') };
  const file = join(here.dir, 'library.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'l', body: { messages: [{ role: 'user', content: 'l' }] } }) + '\n');
  const key = here.env.ROUTER_API_KEY!;
  const withPassword = new RouterClient({ apiRoot: here.apiRoot.replace('http://', 'http://user:s3cret@'), apiKey: key });
  const plain = new RouterClient({ apiRoot: here.apiRoot, apiKey: key });
  const elsewhere = new RouterClient({ apiRoot: there.apiRoot, apiKey: there.env.ROUTER_API_KEY! });
  try {
    const made = await runJob(withPassword, { input: file, model: 'local/echo', env, watch: true, interval: 0.05 });
    const job = made.job.id;
    for (const kept of [join(env.ROUTER_STATE_DIR, 'jobs', job, 'job.json'), join(env.ROUTER_STATE_DIR, 'batches.jsonl')]) expect(readFileSync(kept, 'utf8')).not.toContain('s3cret');
    expect((await runJob(plain, { resume: job, env, watch: true, interval: 0.05 })).job.id).toBe(job);
    const refused = await runJob(elsewhere, { resume: job, env, watch: true, interval: 0.05 }).catch((e: Error) => e);
    expect(refused).toMatchObject({ message: `${job} was made at ${here.apiRoot}, where its batches are, not at ${there.apiRoot}: run it with that API root, or start another job (fresh)` });
  } finally {
    await Promise.all([withPassword.close(), plain.close(), elsewhere.close()]);
  }
});

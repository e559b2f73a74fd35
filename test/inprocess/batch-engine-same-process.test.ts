import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { BatchError, runJob } from '../../src/batch/index.js';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// Two runJob of one job in one program: the second is refused with an error that says so (not
// "process <its own pid>", nor "remove the lock if none runs": its own program runs it).
let t: InProcessEnv;
let client: RouterClient;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startInProcessEnv();
  client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.emu.apiRoot, maxRetries: 0 });
  env = { ROUTER_STATE_DIR: join(t.dir, 'same-process-state') };
});
afterAll(async () => {
  await client.close();
  await t.close();
});

describe('runJob twice on one job in one process', () => {
  it('the second is refused as run by this process, typed; the first runs on and releases', async () => {
    const file = join(t.dir, 'twice.jsonl');
    writeFileSync(file, [1, 2].map((i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `twice ${i}` }] } })).join('\n') + '\n');
    let second: Promise<unknown> | undefined;
    const first = await runJob(client, {
      input: file,
      model: 'local/echo',
      watch: true,
      interval: 0.05,
      env,
      // Called while the first holds the job: the second starts then, in this same process.
      on: { started: (job) => (second = runJob(client, { resume: job.id, watch: true, interval: 0.05, env }).catch((err: unknown) => err)) },
    });
    expect(first.totals).toMatchObject({ finished: 1, completed: 2 });
    const err = await second;
    expect(err).toBeInstanceOf(BatchError);
    const e = err as BatchError;
    const lock = join(env.ROUTER_STATE_DIR!, 'jobs', first.job.id, 'run.lock');
    expect(e.reason).toBe('busy');
    expect(e.data).toEqual({ about: 'job_running_here', job: first.job.id, lock });
    expect(e.message).toBe(`${first.job.id} is already being run by this process (another runJob of it has not ended): wait for that one to end`);
    expect(e.message).not.toContain(String(process.pid));
    expect(existsSync(lock)).toBe(false);
    // Once the first has ended, the job is this program's to run again.
    const again = await runJob(client, { resume: first.job.id, watch: true, interval: 0.05, env });
    expect(again.totals).toMatchObject({ finished: 1, completed: 2 });
  });
});

import { lutimesSync, mkdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { runJob } from '../../src/batch/index.js';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// runJob is a library call (`router-cli/batch`): a program that runs it goes on with its own work
// meanwhile. A lock left by a run in another pid namespace (a container on the same volume, its run
// killed) is watched for a few seconds before it is taken over; before, that watch blocked the
// program's event loop (Atomics.wait) for its whole length: no timer, no socket, no answer.
let t: InProcessEnv;
let client: RouterClient;
let env: NodeJS.ProcessEnv;
const left = `1:5@${hostname()}#4026531999`;

/** A lock of a run in another pid namespace, not refreshed for an hour: its holder is gone. */
function leaveLock(lock: string): void {
  symlinkSync(left, lock);
  const long = new Date(Date.now() - 3_600_000);
  lutimesSync(lock, long, long);
}

/** What `lock` says once this process's timers run again, `ms` from now (null: no lock). */
function readSoon(lock: string, ms = 10): Promise<string | null> {
  return new Promise((resolve) =>
    setTimeout(() => {
      try {
        resolve(readlinkSync(lock));
      } catch {
        resolve(null);
      }
    }, ms),
  );
}

beforeAll(async () => {
  t = await startInProcessEnv();
  client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.emu.apiRoot, maxRetries: 0 });
  env = { ROUTER_STATE_DIR: join(t.dir, 'lock-wait-state') };
});
afterAll(async () => {
  await client.close();
  await t.close();
});

function input(name: string): string {
  const file = join(t.dir, name);
  writeFileSync(file, [1, 2].map((i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `${name} ${i}` }] } })).join('\n') + '\n');
  return file;
}

describe("runJob and a lock left by another namespace's run", () => {
  it("the job's run lock: watched with the program's timers running, then taken over", async () => {
    const done = await runJob(client, { input: input('run-lock.jsonl'), model: 'local/echo', watch: true, interval: 0.05, env });
    const lock = join(env.ROUTER_STATE_DIR!, 'jobs', done.job.id, 'run.lock');
    leaveLock(lock);
    const meanwhile = readSoon(lock);
    const outcome = await runJob(client, { resume: done.job.id, watch: true, interval: 0.05, env });
    // Before: the timer ran only once the watch was over (the lock this run's, or released).
    expect(await meanwhile).toBe(left);
    expect(outcome.totals).toMatchObject({ finished: 1, completed: 2 });
    expect(() => readlinkSync(lock)).toThrow(/ENOENT/);
  });

  it('the lock of the jobs list (picking the input\'s job): the same', async () => {
    const jobs = join(env.ROUTER_STATE_DIR!, 'jobs');
    mkdirSync(jobs, { recursive: true });
    const lock = join(jobs, 'jobs.lock');
    leaveLock(lock);
    // The input is read and planned first (awaited): the watch starts well before half a second, and lasts 7 s.
    const meanwhile = readSoon(lock, 500);
    const outcome = await runJob(client, { input: input('list-lock.jsonl'), model: 'local/echo', watch: true, interval: 0.05, env });
    expect(await meanwhile).toBe(left);
    expect(outcome.totals).toMatchObject({ finished: 1, completed: 2 });
    expect(() => readlinkSync(lock)).toThrow(/ENOENT/);
  });
});

import { mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { holdJob, saveJob, type JobRecord } from '../../src/batch/job/store.js';
import { BatchError } from '../../src/batch/errors.js';
import { waitBound } from '../support/until.js';

const dir = mkdtempSync(join(tmpdir(), 'router-job-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a job whose run lock is taken over while held (batch is a library: no exit)', () => {
  it('the next save refuses with a typed error naming the taker; the program goes on', async () => {
    const env = { ROUTER_STATE_DIR: dir };
    const id = 'job_lost';
    mkdirSync(join(dir, 'jobs', id), { recursive: true });
    const release = await holdJob(env, id);
    const job = { id } as JobRecord;
    saveJob(env, job);
    // Another process took it over (this one not heard for a while): the lock names it now.
    const lock = join(dir, 'jobs', id, 'run.lock');
    unlinkSync(lock);
    symlinkSync('4242:1@another-machine#1', lock);
    // The holder sees it at its next refresh (every 2 s). Before: process.exit(1) from the refresh timer.
    let refused: unknown;
    for (const end = Date.now() + waitBound(); !refused && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        saveJob(env, job);
      } catch (err) {
        refused = err;
      }
    }
    expect(refused).toBeInstanceOf(BatchError);
    expect((refused as BatchError).reason).toBe('busy');
    expect((refused as BatchError).message).toBe('job_lost: its run was taken over by process 4242 (4242:1@another-machine#1) while this one was not heard; stopped, so no shard is sent twice');
    release();
    // The taker's lock is left to it.
    expect(readlinkSync(lock)).toBe('4242:1@another-machine#1');
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BatchError, loadJob } from '../../src/batch/index.js';
import { openJob } from '../../src/batch/job/run.js';
import { scanRequests } from '../../src/batch/scan.js';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { FLAVORS } from '../support/batch-jobs.js';
import { startedForAll } from '../support/for-all.js';

// The batch engine speaks to a program in its option names (model, resume), with the facts as data;
// the CLI words the same failures with its flags and commands, as it always has. Each flavour has
// its own environment and files.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startInProcessEnv({ flavor }));
  let env: NodeJS.ProcessEnv;
  let noModel: string;
  let twoModels: string;
  beforeAll(() => {
    env = { ROUTER_STATE_DIR: join(t.dir, 'engine-state') };
    noModel = join(t.dir, 'no-model.jsonl');
    writeFileSync(noModel, JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } }) + '\n');
    twoModels = join(t.dir, 'two-models.jsonl');
    writeFileSync(twoModels, ['a', 'b'].map((id, i) => JSON.stringify({ custom_id: id, body: { model: `local/m${i}`, messages: [] } })).join('\n') + '\n');
  });

  const caught = async (p: Promise<unknown> | (() => unknown)) => {
    try {
      await (typeof p === 'function' ? p() : p);
    } catch (err) {
      return err as BatchError;
    }
    throw new Error('no error');
  };
  const cliWords = /--[a-z]|router /;

  describe('BatchError: option names for programs, flags for the CLI', () => {
    it('no model', async () => {
      const err = await caught(openJob({ input: noModel, env, fresh: true }));
      expect(err).toBeInstanceOf(BatchError);
      expect(err.data).toEqual({ about: 'no_model' });
      expect(err.message).not.toMatch(cliWords);
      expect(err.message).toMatch(/give model/);
      const r = await t.run(['batch', 'run', noModel]);
      expect(r.stderr).toBe('error: no model: the bodies name none; give --model (or set a default: router config set model …)\n');
      expect(r.code).toBe(2);
    });

    it('resume with an input', async () => {
      writeFileSync(join(t.dir, 'one.jsonl'), JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [] } }) + '\n');
      const made = await openJob({ input: join(t.dir, 'one.jsonl'), env, fresh: true });
      made.release();
      const err = await caught(openJob({ input: noModel, resume: made.job.id, env }));
      expect(err.data).toMatchObject({ about: 'resume_with_input', job: made.job.id });
      expect(err.message).toMatch(new RegExp(`^resume ${made.job.id} takes no input`));
      expect(err.message).not.toMatch(cliWords);
    });

    it('a job id that is none, a job that is not there', async () => {
      for (const id of ['nonsense', 'job_20990101_ffff']) {
        const err = await caught(() => loadJob(env, id));
        expect(err.data?.about).toBe(id === 'nonsense' ? 'not_a_job_id' : 'no_job');
        expect(err.message).not.toMatch(cliWords);
      }
      const r = await t.run(['batch', 'job', 'job_20990101_ffff']);
      expect(r.stderr).toBe('error: no job job_20990101_ffff (router batch jobs lists them)\n');
    });

    it('lines naming different models', async () => {
      const err = await caught(scanRequests(twoModels, 'two-models.jsonl', {}));
      const said = 'the bodies name different models ("local/m0" on line 1, "local/m1" on line 2), and a batch has one: make a file of each model\'s lines';
      expect(err.lines).toEqual([`two-models.jsonl: ${said}`]);
      const r = await t.run(['batch', 'create', twoModels]);
      expect(r.stderr).toBe(`error: ${twoModels}: ${said}\n`);
      expect(r.code).toBe(2);
      // It said "give --model", which only moves the refusal to the other model's lines.
      const given = await t.run(['batch', 'create', twoModels, '--model', 'local/m0']);
      expect(given).toMatchObject({ code: 2, stderr: `error: ${twoModels}:2: body.model "local/m1" differs from --model "local/m0"\n` });
    });
  });
});

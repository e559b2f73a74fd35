import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { FLAVORS } from '../support/batch-jobs.js';

// A `batch run` refused before its first create leaves no job: the next run of the file plans
// afresh with its own settings instead of "resuming" a job that never ran.
let t: InProcessEnv;
let input: string;

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startInProcessEnv({ flavor });
    input = join(t.dir, 'requests.jsonl');
    writeFileSync(input, [1, 2, 3].map((i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `q ${i}` }] } })).join('\n') + '\n');
    mkdirSync(join(t.dir, 'a-folder'));
  });
  afterAll(() => t.close());

  const jobs = () => {
    const dir = join(t.dir, 'cli-state', 'jobs');
    return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('job_')) : [];
  };
  const batches = async () => flavor === 'deployed' ? t.emu.batches.store.all().length : ((await t.call('GET', '/v1/batches?limit=100')).json.data.length as number);

  describe('batch run refused before anything is submitted', () => {
    it.each([
      ['--results naming a folder', ['--results', 'a-folder'], 2, /cannot write .*a-folder: is a folder/],
      ['--results in a folder that does not exist', ['--results', 'no-such-folder/out.jsonl'], 2, /folder .*no-such-folder does not exist/],
      ['over --max-cost', ['--max-cost', '0.0000001'], 4, /over --max-cost/],
    ])('%s: no job left, no batch made', async (_, flags, code, said) => {
      const before = await batches();
      const r = await t.run(['batch', 'run', input, '--model', 'local/echo', ...flags.map((f) => (f.includes('folder') ? join(t.dir, f) : f))]);
      expect(r.stderr).toMatch(said);
      expect(r.code).toBe(code);
      expect(jobs()).toEqual([]);
      expect(await batches()).toBe(before);
    });

    it('without a key: exit 3, no job left; the next run with a key plans its own job', async () => {
      const r = await t.run(['batch', 'run', input, '--model', 'local/echo', '--max-requests', '1'], { env: { ROUTER_API_KEY: '' } });
      expect(r.code).toBe(3);
      expect(jobs()).toEqual([]);
      const ok = await t.run(['batch', 'run', input, '--model', 'local/echo', '--max-requests', '2']);
      expect(ok.stderr).not.toMatch(/resuming/);
      expect(ok.code).toBe(0);
      expect(jobs()).toHaveLength(1);
    });

    it('a job that was submitted is kept when a later step fails', async () => {
      const [id] = jobs();
      const r = await t.run(['batch', 'run', '--resume', id!, '--results', join(t.dir, 'a-folder')]);
      expect(r.code).toBe(2);
      expect(jobs()).toEqual([id]);
    });
  });
});

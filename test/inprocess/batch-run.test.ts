/**
 * `router batch run`: jobs bigger than one batch, through the real binary against the emulator,
 * including kill -9 at every phase and exactly-once submission.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAVORS, batchesOf as batchesOfSpace, expectExactlyOnce as expectExactlyOnceIn, expectMerged, jobsIn, jsonLines, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;

const space = (credits?: number) => newSpace(t, 'jobs', credits);
const input = (name: string, count: number, body: (i: number) => object = (i) => ({ messages: [{ role: 'user', content: `line ${i}` }] })) => requestsFile(t.dir, name, count, body);
const batchesOf = (s: Space) => batchesOfSpace(t, s);
const faults = (s: Space, specs: string[]) => setFaults(t, s, specs);
const jobs = jobsIn;
const lines = jsonLines;
const expectExactlyOnce = (s: Space, job: any) => expectExactlyOnceIn(t, s, job);

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startCliEnv({ batchDelayMs: 5, flavor });
  });
  afterAll(() => t.close());

  describe('router batch run', () => {
    it('splits a file into shards, runs them, merges results in input order; jobs and job show it', async () => {
      const s = await space();
      const file = input('seven.jsonl', 23);
      const out = join(t.dir, 'seven-out.jsonl');
      const r = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '5', '--watch', '--interval', '0.05', '--results', out], { env: s.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      // Piped, the follow still says how it goes (a line on each change), never minutes of silence.
      expect(r.stderr).toMatch(/^job_\w+: shards \d\/5 · requests \d+ completed, \d+ failed of 23/m);
      const rows = expectMerged(out, 23);
      expect(rows[6].response.body.choices[0].message.content).toBe('line 7');
      const [job] = jobs(s);
      expect(job.shards.map((x: any) => [x.first_line, x.last_line, x.count])).toEqual([[1, 5, 5], [6, 10, 5], [11, 15, 5], [16, 20, 5], [21, 23, 3]]);
      await expectExactlyOnce(s, job);
      const gets = t.requests().filter((q: any) => q.method === 'GET' && q.workspace === s.workspace);
      if (flavor === 'spec') {
        // Following costs one list call per poll; each batch is fetched once, for its results.
        expect(gets.filter((q) => q.path.startsWith('/v1/batches/')).map((q) => q.path).sort()).toEqual(job.shards.map((x: any) => `/v1/batches/${x.batch_id}`).sort());
        expect(gets.filter((q) => q.path === '/v1/batches').length).toBeGreaterThan(0);
      } else {
        // No listing: followed by id, each batch of the job, and never a listing after the first look.
        const ids = new Set(job.shards.map((x: any) => `/beta/batches/${x.batch_id}`));
        expect(gets.filter((q) => q.path.startsWith('/beta/batches/')).every((q) => ids.has(q.path))).toBe(true);
        expect(gets.filter((q) => q.path === '/beta/batches' || q.path === '/v1/batches').length).toBeLessThanOrEqual(2);
      }

      const listed = JSON.parse((await t.run(['batch', 'jobs', '--json'], { env: s.env })).stdout);
      expect(listed.map((j: any) => j.id)).toEqual([job.id]);
      const shown = JSON.parse((await t.run(['batch', 'job', job.id, '--json'], { env: s.env })).stdout);
      expect(shown.totals).toMatchObject({ shards: 5, finished: 5, requests: 23, completed: 23, failed: 0 });
      const batches = await batchesOf(s);
      expect(shown.totals.cost).toBeCloseTo(batches.reduce((sum, b) => sum + b.usage.cost, 0), 10);
      const tsv = (await t.run(['batch', 'jobs'], { env: s.env })).stdout;
      expect(tsv).toMatch(new RegExp(`^${job.id}\\tcompleted\\t5/5\\t23/0/23\\t`));

      const joined = join(t.dir, 'seven-joined.jsonl');
      const again = await t.run(['batch', 'run', '--resume', job.id, '--results', joined, '--join'], { env: s.env });
      expect(again.code, again.stderr).toBe(0);
      const j = lines(joined);
      expect(j[22]).toMatchObject({ line: 23, request: { custom_id: 'c23' }, result: { custom_id: 'c23', error: null } });
      expect((await batchesOf(s)).length).toBe(5);

      // Resumed, the job keeps its plan: a flag of another plan is refused (exit 2), not ignored.
      for (const [flags, said] of [
        [['--model', 'local/lorem'], "keeps the job's own model (local/echo): leave --model out"],
        [['--max-requests', '7'], "keeps the job's own max-requests (5): leave --max-requests out"],
        [['--no-fallbacks'], "keeps the job's own provider preferences ({}): leave --provider-only / --no-fallbacks out"],
      ] as const) {
        const r = await t.run(['batch', 'run', '--resume', job.id, ...flags], { env: s.env });
        expect(r).toMatchObject({ code: 2, stdout: '' });
        expect(r.stderr).toBe(`error: --resume ${job.id} ${said} (the file run with --new makes a job with other settings)\n`);
      }
      expect((await t.run(['batch', 'run', '--resume', job.id, '--model', 'local/echo', '--max-requests', '5'], { env: s.env })).code).toBe(0);
      expect((await batchesOf(s)).length).toBe(5);
    });

    it('--dry-run prints the shards and sends nothing; bad input is refused before anything is sent', async () => {
      const s = await space();
      const file = input('dry.jsonl', 12);
      t.clearRequests();
      const dry = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '5', '--dry-run', '--json'], { env: s.env });
      expect(dry.code).toBe(0);
      expect(dry.stderr).toMatch(/^dry run: 12 requests in 3 shards checked; nothing was saved or sent$/m);
      const plan = JSON.parse(dry.stdout);
      expect(plan.shards.map((x: any) => x.count)).toEqual([5, 5, 2]);
      expect(plan.shards.every((x: any) => x.bytes > 0)).toBe(true);
      // --max-bytes takes a size as people write it: 1K is 1024 bytes, the same as the plain number.
      const bySize = async (size: string) => JSON.parse((await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-bytes', size, '--dry-run', '--json'], { env: s.env })).stdout).shards.map((x: any) => x.count);
      expect(await bySize('1K')).toEqual(await bySize('1024'));
      expect(await bySize('1KiB')).toEqual(await bySize('1024'));
      expect((await bySize('1K')).length).toBeGreaterThan(1);
      expect(await bySize('190M')).toEqual([12]);
      expect(await bySize('200000000')).toEqual([12]);
      const tooBig = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-bytes', '201M', '--dry-run'], { env: s.env });
      expect(tooBig.stderr).toBe(`error: option '--max-bytes <size>' argument '201M' is invalid: must be between 1 KiB and 200 MB; see "router batch run --help"\n`);
      const bad = join(t.dir, 'bad.jsonl');
      writeFileSync(bad, `${readFileSync(file, 'utf8')}{"custom_id": "c1", "body": {}}\nnot json\n`);
      for (const args of [[bad], [file, '--model', 'nope'], [join(t.dir, 'missing.jsonl')], [t.dir], [file, '--retry-failed'], [file, '--join'], [], ['--resume', 'job_nope'], ['-'], [file, '--results', '--json']]) {
        const r = await t.run(['batch', 'run', ...args, ...(args.includes('--model') ? [] : ['--model', 'local/echo'])], { env: s.env });
        expect(r.code, args.join(' ')).not.toBe(0);
        expect(r.stderr).toMatch(/^error: /);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
      const refused = await t.run(['batch', 'run', bad, '--model', 'local/echo'], { env: s.env });
      expect(refused.stderr).toMatch(/bad\.jsonl:13: duplicate custom_id "c1"/);
      expect(refused.stderr).toMatch(/bad\.jsonl:14: not JSON/);
      // The one request a dry run makes is a read of the model list, for the cost bound of the file.
      expect(t.requests().filter((q) => !(q.method === 'GET' && q.path === '/v1/models'))).toHaveLength(0);
      expect(plan.cost_bound).toMatchObject({ model: 'local/echo', requests: 12 });
      expect(jobs(s)).toEqual([]);
    });

    it('a job record edited or damaged by hand is named as damaged by every command, never a TypeError', async () => {
      const s = await space();
      const file = input('torn.jsonl', 3);
      expect((await t.run(['batch', 'run', file, '--model', 'local/echo'], { env: s.env })).code).toBe(0);
      const [job] = jobs(s);
      const record = join(s.state, 'jobs', job.id, 'job.json');
      for (const text of ['{"id":"x"}\n', `${JSON.stringify({ ...job, shards: [{ index: 0 }] })}\n`, 'garbage']) {
        writeFileSync(record, text);
        for (const args of [['batch', 'job', job.id], ['batch', 'run', '--resume', job.id]]) {
          const r = await t.run(args, { env: s.env });
          expect(r.code, `${args.join(' ')} with ${text}`).toBe(1);
          expect(r.stderr).toBe(`error: the record of ${job.id} is damaged: ${record} (kept as it is: fix it, or move its folder away to forget the job)\n`);
        }
        // Said piped too (docs/reliability.md): a listing names the file it leaves out.
        const list = await t.run(['batch', 'jobs'], { env: s.env });
        expect(list.code).toBe(0);
        expect(list.stderr).toBe(`warning: ${record} is damaged and left out (fix it or move it away)\n`);
      }
    });

    it('--retry-failed resubmits only what failed or never ran (an expired shard), keeps the successes', async () => {
      const s = await space();
      // Lines 4 and 9 are refused by the service (temperature 9): failed items of completed batches.
      const file = input('retry.jsonl', 12, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], ...(i === 4 || i === 9 ? { temperature: 9 } : {}) }));
      const id = (await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '4', '--watch', '--interval', '0.05'], { env: s.env })).stderr.match(/job (job_\w+)/)![1]!;
      const out = join(t.dir, 'retry-out.jsonl');
      const r = await t.run(['batch', 'run', '--resume', id, '--retry-failed', '--watch', '--interval', '0.05', '--results', out, '--line-numbers'], { env: s.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/retrying 2 request/);
      const job = jobs(s)[0];
      expect(job.shards.filter((x: any) => x.parent !== undefined).map((x: any) => [x.parent, x.lines])).toEqual([[0, [4]], [2, [9]]]);
      const rows = expectMerged(out, 12);
      expect(rows.map((x) => x.line)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(rows.filter((x) => x.error).map((x) => x.custom_id)).toEqual(['c4', 'c9']);
      await expectExactlyOnce(s, job);
    });

    it('an input edited or removed after the job was planned: refused (exit 2), naming how to get its batches\' results', async () => {
      const s = await space();
      const file = input('edited.jsonl', 6);
      const id = (await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3'], { env: s.env })).stdout.trim();
      const batches: string[] = jobs(s)[0].shards.map((x: any) => x.batch_id as string);
      expect(batches).toHaveLength(2);
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n`);
      for (const [change, why] of [[() => {}, 'changed since the job was planned'], [() => rmSync(file), 'is gone']] as const) {
        change();
        const r = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05'], { env: s.env });
        expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: the input of ${id}, ${file}, ${why}: put it back as it was to take the job up, or get its batches' results as they are: router batch get BATCH --results FILE, for each of ${batches.join(', ')}\n` });
      }
      // The way it names works: each batch's results.
      for (const b of batches) expect((await t.run(['batch', 'get', b, '--watch', '--interval', '0.05', '--results', join(t.dir, `${b}.jsonl`)], { env: s.env })).code).toBe(0);
      expect(batches.flatMap((b) => lines(join(t.dir, `${b}.jsonl`)))).toHaveLength(6);
    });

    it('a shard that expires exits 9; its unrun requests are retried and the merge has one result per line', async () => {
      const s = await space();
      const file = input('expire.jsonl', 9);
      await t.admin('batches', { delay_ms: 400 });
      let id: string;
      try {
        const submitted = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3'], { env: s.env });
        id = submitted.stdout.trim();
        await t.admin('clock', { advance_seconds: 25 * 3600 });
      } finally {
        await t.admin('batches', { delay_ms: 5 });
      }
      const out = join(t.dir, 'expire-out.jsonl');
      const first = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05', '--results', out], { env: s.env });
      expect(first.code).toBe(9);
      const missing = lines(out).filter((x) => x.error?.type === 'missing_result');
      expect(missing.length).toBeGreaterThan(0);
      const retried = await t.run(['batch', 'run', '--resume', id, '--retry-failed', '--watch', '--interval', '0.05', '--results', out], { env: s.env });
      expect(retried.code, retried.stderr).toBe(0);
      expect(expectMerged(out, 9).every((x) => x.error === null)).toBe(true);
    });
  });

  describe('one job, one process running it', () => {
    it('three runs of one file at once: one runs it, the others say which process does; every shard sent once', async () => {
      const s = await space();
      const file = input('together.jsonl', 12);
      const runs = await Promise.all([1, 2, 3].map(() => t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '1'], { env: s.env })));
      const ran = runs.filter((r) => r.code === 0);
      expect(ran).toHaveLength(1);
      const id = ran[0]!.stdout.trim();
      for (const r of runs.filter((x) => x.code !== 0)) {
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(new RegExp(`^(resuming ${id}, made from this file \\(--new starts another job\\)\\n)?error: ${id} is being run by process \\d+: follow it with router batch job ${id} \\(if no router runs, remove .*run\\.lock\\)\\n$`));
      }
      expect(jobs(s)).toHaveLength(1);
      await expectExactlyOnce(s, jobs(s)[0]);
      expect(existsSync(join(s.state, 'jobs', id, 'run.lock'))).toBe(false);
    });

    it('--resume of a job a live process runs is refused, nothing sent; one a killed process held is taken up', async () => {
      const s = await space();
      const file = input('held.jsonl', 4);
      const planned = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '1'], { env: s.env });
      const id = planned.stdout.trim();
      const lock = join(s.state, 'jobs', id, 'run.lock');
      const before = (await batchesOf(s)).length;
      symlinkSync(String(process.pid), lock);
      const refused = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05'], { env: s.env });
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toContain(`error: ${id} is being run by process ${process.pid}`);
      expect((await batchesOf(s)).length).toBe(before);
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
      rmSync(lock);
      symlinkSync(String(dead), lock);
      const resumed = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05'], { env: s.env });
      expect(resumed.code, resumed.stderr).toBe(0);
      await expectExactlyOnce(s, jobs(s)[0]);
      expect(existsSync(lock)).toBe(false);
    });
  });

  if (flavor === 'spec') describe('a lost create', () => {
    it('a create whose answer is lost is found in the listing, not sent again', async () => {
      const s = await space();
      const file = input('lost.jsonl', 7);
      await faults(s, ['lost,times=1,path=/v1/batches,method=POST']);
      const out = join(t.dir, 'lost-out.jsonl');
      const r = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3', '--watch', '--interval', '0.05', '--results', out, '--verbose'], { env: s.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/found its batch batch_\w+/);
      expectMerged(out, 7);
      await expectExactlyOnce(s, jobs(s)[0]);
    });
  });

  if (flavor === 'deployed') describe('a lost create where nothing lists batches', () => {
    it('is never sent again on its own: the run stops naming the shard and the time; --resubmit-lost sends it knowingly', async () => {
      const s = await space();
      const file = input('lost-deployed.jsonl', 7);
      await faults(s, ['lost,times=1,path=/beta/batches,method=POST']);
      const out = join(t.dir, 'lost-deployed-out.jsonl');
      const args = ['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3', '--watch', '--interval', '0.05', '--results', out];
      const r = await t.run(args, { env: s.env });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toMatch(/shard 1 of job_\w+ \(lines 1-3 of its input\): the answer to its create, sent at \d{4}-\d\d-\d\dT[\d:.]+Z, was lost, and this service has no batch listing/);
      expect(r.stderr).toMatch(/router batch run --resume job_\w+ --resubmit-lost --watch/);
      // The lost create made its batch; nothing else was sent, and nothing is merged.
      expect(await batchesOf(s)).toHaveLength(1);
      expect(existsSync(out)).toBe(false);
      const [job] = jobs(s);
      expect(job.shards[0]).toMatchObject({ submitting: { unlisted: true } });
      expect(job.shards[0].batch_id).toBeUndefined();

      // Taken up again, it stops again: the shard is still never sent on its own.
      const again = await t.run(['batch', 'run', '--resume', job.id, '--watch', '--interval', '0.05', '--results', out], { env: s.env });
      expect(again.code).toBe(8);
      expect(await batchesOf(s)).toHaveLength(1);

      // Knowingly: sent again (a second batch of the shard), and the job merges only its own batches.
      const knowingly = await t.run(['batch', 'run', '--resume', job.id, '--resubmit-lost', '--watch', '--interval', '0.05', '--results', out, '--verbose'], { env: s.env });
      expect(knowingly.code, knowingly.stderr).toBe(0);
      expect(knowingly.stderr).toMatch(/shard 1: its create of .+ was lost; sent again as asked/);
      expectMerged(out, 7);
      const done = jobs(s)[0];
      const all = await batchesOf(s);
      expect(all).toHaveLength(4);
      const lost = all.map((b) => b.id).filter((id) => !done.shards.some((x: any) => x.batch_id === id));
      expect(lost).toHaveLength(1);
    });
  });
});

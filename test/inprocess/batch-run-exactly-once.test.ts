/**
 * `router batch run` exactly once when it cannot tell batches apart by their shape: a lost create
 * beside batches of the same shape, a clock that differs from the service's, many runs of one
 * file at once, the same file under other names, stale locks taken over at once.
 */
import { describe, expect, it } from 'vitest';
import { batchesOf as batchesOfSpace, jobsIn, newSpace, requestsFile, setFaults, type Space } from '../support/batch-jobs.js';
import { cpSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv } from '../support/cli-env.js';
import { waitBound } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv({ batchDelayMs: 5 }));

const space = () => newSpace(t, 'once');
/** Lines c1..cN whose prompts say `word i`: two files of one shape, with other prompts. */
const input = (name: string, count: number, word: string, extra: (i: number) => object = () => ({})) => requestsFile(t.dir, name, count, (i) => ({ messages: [{ role: 'user', content: `${word} ${i}` }], ...extra(i) }));

const batchesOf = (s: Space) => batchesOfSpace(t, s);
const faults = (s: Space, specs: string[]) => setFaults(t, s, specs);
const jobs = jobsIn;

const contents = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).map((r) => [r.custom_id, r.response?.body.choices[0].message.content]);
const expected = (word: string, count: number) => Array.from({ length: count }, (_, i) => [`c${i + 1}`, `${word} ${i + 1}`]);
const watchArgs = (file: string, out: string, more: string[] = []) => ['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', out, ...more];

describe('a lost create is never taken for another batch of the same shape', () => {
  it('another file of the same shape made a batch just before: the run finds its own, merges only its own answers', async () => {
    const s = await space();
    const other = input('other.jsonl', 20, 'other');
    const mine = input('mine.jsonl', 20, 'mine');
    const made = await t.run(['batch', 'create', other, '--model', 'local/echo'], { env: s.env });
    expect(made.code, made.stderr).toBe(0);
    await faults(s, ['lost,times=1,path=/v1/batches,method=POST']);
    const out = join(t.dir, 'mine.out');
    const r = await t.run(watchArgs(mine, out, ['--verbose']), { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/found its batch batch_\w+/);
    expect(contents(out)).toEqual(expected('mine', 20));
    const [job] = jobs(s);
    expect(job.shards[0].batch_id).not.toBe(made.stdout.trim());
    // Its own batch and the other one: nothing orphaned, nothing sent twice.
    expect((await batchesOf(s)).map((b) => b.id).sort()).toEqual([made.stdout.trim(), job.shards[0].batch_id].sort());
  });

  it("with this machine's clock 30 s ahead of the service's, the lost create is still found, not sent again", async () => {
    const s = await space();
    const file = input('ahead.jsonl', 6, 'ahead');
    const skew = join(t.dir, 'clock-ahead.cjs');
    writeFileSync(skew, 'const now = Date.now; Date.now = () => now() + 30000;\n');
    await faults(s, ['lost,times=1,path=/v1/batches,method=POST']);
    const out = join(t.dir, 'ahead.out');
    const r = await t.run(watchArgs(file, out, ['--max-requests', '3']), { env: { ...s.env, NODE_OPTIONS: `--require ${skew}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(contents(out)).toEqual(expected('ahead', 6));
    const [job] = jobs(s);
    expect((await batchesOf(s)).map((b) => b.id).sort()).toEqual(job.shards.map((x: any) => x.batch_id).sort());
  });

  it('a create whose fate is unknown, with batches of its shape listed after it: one proven its own by its results is taken, others never', async () => {
    const s = await space();
    const file = input('fate.jsonl', 4, 'fate');
    const out = join(t.dir, 'fate.out');
    expect((await t.run(watchArgs(file, out), { env: s.env })).code).toBe(0);
    // The record as a run killed during a create leaves it: its create's tag and the batch newest before it.
    const record = join(s.state, 'jobs', jobs(s)[0].id, 'job.json');
    const job = jobs(s)[0];
    const ownBatch = job.shards[0].batch_id;
    const tag = 'jfeedfacecafe.';
    const shard = job.shards[0];
    for (const k of ['batch_id', 'tag', 'status', 'request_counts', 'usage', 'created_at']) delete shard[k];
    shard.submitting = { tag, after: { id: ownBatch, created_at: (await batchesOf(s))[0].created_at } };
    writeFileSync(record, JSON.stringify(job));
    const create = async (ids: (i: number) => string, word: string) => {
      const res = await fetch(`${t.apiRoot}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: [1, 2, 3, 4].map((i) => ({ custom_id: ids(i), body: { messages: [{ role: 'user', content: `${word} ${i}` }] } })) }),
      });
      return ((await res.json()) as any).id as string;
    };
    // A foreign batch of the same shape (same ids, other prompts), then the create's own, then another foreign one.
    const foreign1 = await create((i) => `c${i}`, 'foreign');
    const own = await create((i) => `${tag}c${i}`, 'fate');
    const foreign2 = await create((i) => `c${i}`, 'foreign');
    // All three ended (their results can show whose they are): on a loaded machine 300 ms was not always enough.
    for (const end = Date.now() + waitBound(); Date.now() < end && !(await batchesOf(s)).every((b) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status)); ) await new Promise((r) => setTimeout(r, 50));
    const r = await t.run(['batch', 'run', '--resume', job.id, '--watch', '--interval', '0.05', '--results', out], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(jobs(s)[0].shards[0].batch_id).toBe(own);
    expect(contents(out)).toEqual(expected('fate', 4));
    // Looked at newest first: the newer foreign one was shown not its own; the older never needed a look.
    expect(jobs(s)[0].foreign).toEqual([foreign2]);
    expect(foreign1).not.toBe(own);
    expect((await batchesOf(s)).length).toBe(4);
  });

  it('two unended batches of its shape after a lost create: neither is taken, the run stops (exit 8) naming both, nothing sent', async () => {
    const s = await space();
    const file = input('twins.jsonl', 3, 'twins');
    const planned = await t.run(['batch', 'run', file, '--model', 'local/echo'], { env: s.env });
    expect(planned.code, planned.stderr).toBe(0);
    const job = jobs(s)[0];
    const record = join(s.state, 'jobs', job.id, 'job.json');
    const shard = job.shards[0];
    for (const k of ['batch_id', 'tag', 'status', 'request_counts', 'usage', 'created_at']) delete shard[k];
    shard.submitting = { tag: 'j000000000000.', after: { id: (await batchesOf(s))[0].id, created_at: (await batchesOf(s))[0].created_at } };
    writeFileSync(record, JSON.stringify(job));
    await t.admin('batches', { delay_ms: 60_000 });
    try {
      for (let i = 0; i < 2; i++) expect((await t.run(['batch', 'create', file, '--model', 'local/echo'], { env: s.env })).code).toBe(0);
      const before = (await batchesOf(s)).length;
      const r = await t.run(['batch', 'run', '--resume', job.id], { env: s.env });
      expect(r.code).toBe(8);
      expect(r.stderr).toMatch(/the answer to its create was lost, and 2 batches match it: batch_\w+, batch_\w+\./);
      expect((await batchesOf(s)).length).toBe(before);
      expect(jobs(s)[0].shards[0].batch_id).toBeUndefined();
    } finally {
      await t.admin('batches', { delay_ms: 5 });
    }
  });
});

describe('one file, one job, one submission of each shard', () => {
  it('five runs of one file at once, 40 jobs in the state folder, repeated: as many batches as shards', async () => {
    const trials = 8;
    let shards = 0;
    let made = 0;
    for (let trial = 0; trial < trials; trial++) {
      const s = await space();
      const file = input(`stress-${trial}.jsonl`, 20, `stress${trial}`);
      // 40 other jobs: copies of a record of another file, under other ids.
      const seed = input(`seed-${trial}.jsonl`, 2, 'seed');
      const planned = await t.run(['batch', 'run', seed, '--model', 'local/echo'], { env: s.env });
      const seedJob = jobs(s)[0];
      expect(planned.code).toBe(0);
      for (let i = 0; i < 40; i++) {
        const id = `${seedJob.id}x${i}`;
        mkdirSync(join(s.state, 'jobs', id));
        writeFileSync(join(s.state, 'jobs', id, 'job.json'), JSON.stringify({ ...seedJob, id, input: { ...seedJob.input, sha256: `${i}` } }));
      }
      const before = (await batchesOf(s)).length;
      // Started within a few tenths of a second of each other: some pick the job while another ends its run.
      const runs = await Promise.all([0, 1, 2, 3, 4].map(async (i) => {
        await new Promise((r) => setTimeout(r, i * 60 + Math.floor(Math.random() * 60)));
        return t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '5'], { env: s.env });
      }));
      for (const r of runs) expect([0, 1], r.stderr).toContain(r.code);
      const job = jobs(s).find((j) => j.input.path.endsWith(`stress-${trial}.jsonl`));
      shards += job.shards.length;
      made += (await batchesOf(s)).length - before;
    }
    if (process.env.ROUTER_TEST_COUNTS) console.log(`stress: ${trials} trials, ${made} batches for ${shards} shards`);
    expect(made, `${made} batches for ${shards} shards over ${trials} trials`).toBe(shards);
  });

  it('a symbolic link, a hard link and a copy of the file are the same job: nothing is sent again', async () => {
    const s = await space();
    const file = input('named.jsonl', 6, 'named');
    const out = join(t.dir, 'named.out');
    expect((await t.run(watchArgs(file, out, ['--max-requests', '3']), { env: s.env })).code).toBe(0);
    const soft = join(t.dir, 'named-soft.jsonl');
    const hard = join(t.dir, 'named-hard.jsonl');
    const copy = join(t.dir, 'named-copy.jsonl');
    symlinkSync(file, soft);
    linkSync(file, hard);
    cpSync(file, copy);
    for (const name of [soft, hard, copy]) {
      const r = await t.run(watchArgs(name, out, ['--max-requests', '3']), { env: s.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^resuming job_\w+, made from this file/);
      expect(contents(out)).toEqual(expected('named', 6));
    }
    expect(jobs(s)).toHaveLength(1);
    expect((await batchesOf(s)).length).toBe(2);
  });
});

describe('said on stderr, whatever stderr is', () => {
  it('piped batch run --watch ending with failed items says how many (exit 0, as batch get --exit-status)', async () => {
    const s = await space();
    const file = input('failing.jsonl', 6, 'failing', (i) => (i === 2 || i === 5 ? { temperature: 9 } : {}));
    const r = await t.run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05', '--max-requests', '3'], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/job_\w+: 2 of 6 requests failed \(retry them: router batch run --resume job_\w+ --retry-failed --watch --results …\)\n$/);
    const out = join(t.dir, 'failing.out');
    const merged = await t.run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '3', '--results', out], { env: s.env });
    expect(merged.code).toBe(0);
    expect(merged.stderr).toMatch(/: 2 of 6 requests failed/);
  });

  it('a line nested 70 levels deep is refused before anything is sent, with its line number', async () => {
    const s = await space();
    let deep: unknown = 'x';
    for (let i = 0; i < 70; i++) deep = { a: deep };
    const file = join(t.dir, 'deep.jsonl');
    writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ custom_id: `c${i}`, body: { messages: [{ role: 'user', content: 'hi' }], ...(i === 2 ? { metadata: deep } : {}) } })).join('\n'));
    for (const command of ['run', 'create']) {
      const r = await t.run(['batch', command, file, '--model', 'local/echo'], { env: s.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`error: ${file}:2: body is nested deeper than 64 levels (the service refuses it)\n`);
    }
    expect(await batchesOf(s)).toEqual([]);
    expect(jobs(s)).toEqual([]);
  });
});

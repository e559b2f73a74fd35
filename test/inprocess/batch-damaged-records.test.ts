/**
 * A damaged job or create record may stand for batches that were sent: `batch run` and `batch create` of the same input
 * refuse (exit 1, one line naming the file and what to do), sending nothing, never start over in silence and pay twice.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { batchesOf, FLAVORS, jobsIn, newSpace, requestsFile } from '../support/batch-jobs.js';
import { createKey, createRecordPath } from '../../src/batch/pending-create.js';

let t: CliEnv;
const body = (i: number) => ({ messages: [{ role: 'user', content: `q${i}` }] });

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startCliEnv({ flavor });
  });
  afterAll(() => t.close());

  it('batch run of a file whose job record is damaged refuses, sending nothing; --new starts another job', async () => {
    const s = await newSpace(t, `damaged-job-${flavor}`);
    const f = requestsFile(t.dir, `damaged-job-${flavor}.jsonl`, 4, body);
    const first = await t.run(['batch', 'run', f, '--model', 'local/echo', '--max-requests', '2'], { env: s.env });
    expect(first.code, first.stderr).toBe(0);
    const [job] = jobsIn(s);
    const record = join(s.state, 'jobs', job.id, 'job.json');
    // A hand edit cut it: its input's SHA-256 is still in it.
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 400));
    const again = await t.run(['batch', 'run', f, '--model', 'local/echo', '--max-requests', '2'], { env: s.env });
    // Was: a warning, then a new job whose two shards were sent again (exit 0, 4 batches).
    expect(again.stderr).toBe(`error: the record of ${job.id}, ${record}, is damaged and may be this file's job (its batches may have been sent, and would be paid for twice): fix it, or move its folder away to start over; --new starts another job anyway\n`);
    expect(again.code).toBe(1);
    expect(await batchesOf(t, s)).toHaveLength(2);
    // One that cannot be read at all cannot be told to be another file's either.
    writeFileSync(record, '');
    mkdirSync(join(dirname(record), '..', 'job_20260101_0000dead', 'job.json'), { recursive: true });
    const unreadable = await t.run(['batch', 'run', f, '--model', 'local/echo', '--max-requests', '2'], { env: s.env });
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toMatch(/^error: the record of job_\w+, \S+job\.json, (is damaged|cannot be read) and may be this file's job/);
    expect(await batchesOf(t, s)).toHaveLength(2);
    const fresh = await t.run(['batch', 'run', f, '--model', 'local/echo', '--max-requests', '2', '--new'], { env: s.env });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await batchesOf(t, s)).toHaveLength(4);
  });

  it("another file's damaged job record is said and left out; the file's own job is run", async () => {
    const s = await newSpace(t, `damaged-other-${flavor}`);
    const other = requestsFile(t.dir, `damaged-other-a-${flavor}.jsonl`, 2, body);
    expect((await t.run(['batch', 'run', other, '--model', 'local/echo'], { env: s.env })).code).toBe(0);
    const [job] = jobsIn(s);
    const record = join(s.state, 'jobs', job.id, 'job.json');
    writeFileSync(record, readFileSync(record, 'utf8').slice(0, 400));
    const f = requestsFile(t.dir, `damaged-other-b-${flavor}.jsonl`, 3, (i) => body(i + 10));
    const r = await t.run(['batch', 'run', f, '--model', 'local/echo'], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`warning: ${record}: is damaged or unreadable and left out (fix it, or move its folder away to forget the job)\n`);
    expect(await batchesOf(t, s)).toHaveLength(2);
  });

  it('batch create whose earlier create record is damaged refuses, sending nothing and keeping it; --new sends', async () => {
    const s = await newSpace(t, `damaged-create-${flavor}`);
    const f = join(t.dir, `damaged-create-${flavor}.jsonl`);
    writeFileSync(f, `${JSON.stringify({ custom_id: 'a', body: body(1) })}\n`);
    const sha = createHash('sha256').update(readFileSync(f)).digest('hex');
    const record = createRecordPath(s.env, createKey(t.apiRoot, sha, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h' }));
    mkdirSync(dirname(record), { recursive: true });
    writeFileSync(record, '{"sent_at": "2026-12-02T04:00:00.000Z", "aft');
    const r = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: s.env });
    // Was: a warning, the create sent (exit 0) and the record written over, then removed.
    expect(r.stderr).toBe(`error: ${record}, the record of an earlier create of ${f} with these options, is damaged (not a create record): the batch it stands for may have been made, so nothing is sent; router batch list shows whether it was, then move the record away to send it (or --new sends it anyway, billed twice if it was)\n`);
    expect(r.code).toBe(1);
    expect(await batchesOf(t, s)).toHaveLength(0);
    expect(readFileSync(record, 'utf8')).toBe('{"sent_at": "2026-12-02T04:00:00.000Z", "aft');
    const sent = await t.run(['batch', 'create', f, '--model', 'local/echo', '--new'], { env: s.env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stderr).toContain(`${record}, the record of an earlier create of ${f} with these options, is damaged (not a create record); sent as asked (--new): if it made a batch, both are billed\n`);
    expect(await batchesOf(t, s)).toHaveLength(1);
  });
});

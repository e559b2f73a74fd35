import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let requests: string;
let batchId: string;

beforeAll(async () => {
  ({ t, requests, batchId } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

describe('the stdin spool of batch create -', () => {
  it('is removed after the run, and a killed run\'s spool is swept by the next', async () => {
    const { tmpdir } = await import('node:os');
    const stale = join(tmpdir(), 'router-batch-stdin-999999-abcdef');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'stdin.jsonl'), 'half');
    const r = await t.run(['batch', 'create', '-'], { input: readFileSync(requests) });
    expect(r.code).toBe(0);
    expect(existsSync(stale)).toBe(false);
  });
});

describe('--watch and batch ids', () => {

  it('an unreadable 202 on create: the batch is found in the listing, its id printed, nothing sent twice', async () => {
    await t.admin('faults', { faults: ['malformed,times=1,path=/v1/batches,method=POST'] });
    t.clearRequests();
    // Piped, no --verbose: that the answer was lost and the batch found is said (was: only on a terminal).
    const r = await t.run(['batch', 'create', requests]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^the answer to the upload could not be read \(server sent malformed JSON.*\); found its batch in the listing: batch_\w+\n$/);
    const posts = t.requests().filter((q) => q.path === '/v1/batches' && q.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(r.stdout).toMatch(/^batch_\w+\n$/);
  });

  it('an unreadable 202 with the listing down too: the batch may exist, and the CLI says how to check (exit 7)', async () => {
    await t.admin('faults', { faults: ['malformed,times=1,path=/v1/batches,method=POST', '503,path=/v1/batches,method=GET'] });
    const r = await t.run(['--max-retries', '0', 'batch', 'create', requests]);
    await t.admin('faults', { faults: [] });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: the answer to the upload could not be read \(.+\); the batch may exist\. Check with: router batch list( --created-after \d+)?\n$/);
  });

  it('--exit-status: a failed batch exits 9 even when it ended before the call', async () => {
    const bad = join(t.dir, 'bad-model.jsonl');
    writeFileSync(bad, JSON.stringify({ custom_id: 'x', body: { model: 'local/echo', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] } }));
    const id = (await t.run(['batch', 'create', bad])).stdout.trim();
    const w = await t.run(['batch', 'get', id, '--watch', '--interval', '0.05']);
    expect(w.code).toBe(9);
    expect((await t.run(['batch', 'get', id])).code).toBe(0);
    expect((await t.run(['batch', 'get', id, '--exit-status'])).code).toBe(9);
    expect((await t.run(['batch', 'get', batchId, '--exit-status'])).code).toBe(0);
  });

  it('piped batch output follows one rule: a TSV line per batch', async () => {
    const get = (await t.run(['batch', 'get', batchId])).stdout;
    const list = (await t.run(['batch', 'list', '--limit', '100'])).stdout;
    expect(get.split('\t')).toHaveLength(6);
    expect(list.split('\n')).toContain(get.trim());
  });
});

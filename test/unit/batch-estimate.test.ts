import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateFile, lineBound, pendingOfJob } from '../../src/cli/spend/batch-estimate.js';
import type { JobRecord } from '../../src/batch/job/store.js';
import type { Pricing } from '../../src/kit/spend/cost-bound.js';

const dir = mkdtempSync(join(tmpdir(), 'router-estimate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const price: Pricing = { model: 'a/b', prompt: 1e-6, completion: 2e-6, image: 0.01, request: 0.001, maxCompletion: 1000 };

describe('a batch line\'s bound', () => {
  it('is the call\'s bound at half price; embeddings have no completion; no limit takes the model\'s', () => {
    const body = { model: 'a/b', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    expect(lineBound(price, '/v1/chat/completions', body).bound).toBeCloseTo((bytes * 1e-6 + 0.01 + 0.001 + 10 * 2e-6) / 2, 12);
    expect(lineBound(price, '/v1/embeddings', { input: 'x' })).toEqual({ bound: (Buffer.byteLength('{"input":"x"}') * 1e-6 + 0.001) / 2, unlimited: false });
    expect(lineBound(price, '/v1/responses', { input: 'x' }).unlimited).toBe(true);
    expect(lineBound(price, '/v1/responses', { input: 'x' }).bound).toBeCloseTo((13 * 1e-6 + 0.001 + 1000 * 2e-6) / 2, 12);
  });
});

describe('a resumed job', () => {
  const file = join(dir, 'r.jsonl');
  const body = { max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
  writeFileSync(file, Array.from({ length: 4 }, (_, i) => JSON.stringify({ custom_id: `q${i}`, body })).join('\n') + '\n');
  const shard = (index: number, first: number, last: number, extra: object) => ({ index, first_line: first, last_line: last, start: 0, end: 0, count: last - first + 1, bytes: 0, ...extra });
  const job = {
    shards: [shard(0, 1, 2, { batch_id: 'b0', status: 'completed', usage: { cost: 0.25 } }), shard(1, 3, 4, {}), shard(2, 1, 2, { parent: 0, lines: [2] })],
  } as unknown as JobRecord;

  it('bounds only the lines of shards not finished, and counts what the finished ones cost', async () => {
    const pending = pendingOfJob(job);
    expect(pending.spent).toBe(0.25);
    expect([1, 2, 3, 4].map(pending.include)).toEqual([false, true, true, true]);
    const all = await estimateFile(file, '/v1/chat/completions', price);
    const left = await estimateFile(file, '/v1/chat/completions', price, pending.include);
    expect(all.requests).toBe(4);
    expect(left.requests).toBe(3);
    expect(left.bound).toBeCloseTo((all.bound * 3) / 4, 12);
  });
});

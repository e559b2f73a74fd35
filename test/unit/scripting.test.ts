import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { commandWords, rewriteJsonFields, selectFields } from '../../src/cli/io/json-output.js';
import { setField } from '../../src/cli/commands/api.js';
import { sinceMs } from '../../src/cli/commands/usage.js';
import { usageFields } from '../../src/kit/spend/ledger.js';
import { planJob } from '../../src/batch/job/plan.js';
import { shardLines } from '../../src/batch/job/shard-io.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GLOBALS = new Set(['-p', '--profile', '--api-root', '--timeout', '--max-retries']);

describe('--json FIELDS in argv', () => {
  it('takes a field list after --json only when every name is a field (or the command takes no argument)', () => {
    const chat = { path: 'chat', fields: ['id', 'model', 'usage'], noArguments: false };
    const list = { path: 'batch list', fields: ['id', 'status'], noArguments: true };
    expect(rewriteJsonFields(['chat', '--json', 'model,usage', 'hi'], chat)).toEqual(['chat', '--json', '--json-fields', 'model,usage', 'hi']);
    expect(rewriteJsonFields(['chat', '--json', 'hello'], chat)).toEqual(['chat', '--json', 'hello']);
    expect(rewriteJsonFields(['chat', '--json=hello'], chat)).toEqual(['chat', '--json', '--json-fields', 'hello']);
    expect(rewriteJsonFields(['batch', 'list', '--json', 'oops'], list)).toEqual(['batch', 'list', '--json', '--json-fields', 'oops']);
    expect(rewriteJsonFields(['batch', 'get', '--json', 'batch_1'], { ...list, path: 'batch get', noArguments: false })).toEqual(['batch', 'get', '--json', 'batch_1']);
    expect(rewriteJsonFields(['chat', '--', '--json', 'model'], chat)).toEqual(['chat', '--', '--json', 'model']);
    expect(commandWords(['-p', 'work', 'batch', 'get', 'x'], GLOBALS)).toEqual(['batch', 'get']);
    expect(commandWords(['--timeout', '3', 'chat', 'hi'], GLOBALS)).toEqual(['chat', 'hi']);
  });

  it('selects fields of objects, of array elements and of list items, never adding any', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.constantFrom('id', 'status', 'model', 'x'), fc.integer()), { maxLength: 5 }), fc.subarray(['id', 'status', 'model'], { minLength: 1 }), (rows, fields) => {
        const page = selectFields({ object: 'list', data: rows, has_more: false }, fields) as { data: Record<string, number>[] };
        const arr = selectFields(rows, fields) as Record<string, number>[];
        for (const [i, r] of rows.entries()) {
          const want = Object.fromEntries(Object.entries(r).filter(([k]) => fields.includes(k)));
          expect(page.data[i]).toEqual(want);
          expect(arr[i]).toEqual(want);
        }
      }),
    );
    expect(selectFields({ object: 'list', data: [{ embedding: [1] }], model: 'm', usage: {} }, ['model', 'usage'])).toEqual({ model: 'm', usage: {} });
  });
});

describe('router api fields', () => {
  it('nests a[b] and a[] keys as gh does', () => {
    const o: Record<string, unknown> = {};
    setField(o, 'model', 'local/echo');
    setField(o, 'messages[][role]', 'user');
    setField(o, 'messages[][content]', 'hi');
    setField(o, 'messages[][role]', 'assistant');
    setField(o, 'provider[only][]', 'a');
    setField(o, 'provider[only][]', 'b');
    expect(o).toEqual({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant' }], provider: { only: ['a', 'b'] } });
    expect(() => setField({}, 'a]b', 1)).toThrow(/key\[sub\]/);
  });
});

describe('usage', () => {
  it('reads spans and dates; takes tokens and cost under either naming', () => {
    expect(sinceMs('7d', 1_000_000_000_000)).toBe(1_000_000_000_000 - 7 * 86_400_000);
    expect(sinceMs('2026-11-01')).toBe(Date.parse('2026-11-01'));
    // Today's date, given in the morning east of UTC (Tokyo at 01:00 is 16:00 UTC the day before): no refusal.
    expect(sinceMs('2026-11-28', Date.parse('2026-11-27T16:00:00Z'))).toBe(Date.parse('2026-11-28'));
    expect(() => sinceMs('2026-11-29', Date.parse('2026-11-27T16:00:00Z'))).toThrow(/in the future/);
    expect(() => sinceMs('2026-11-27T17:00:00Z', Date.parse('2026-11-27T16:00:00Z'))).toThrow(/in the future/);
    expect(() => sinceMs('lately')).toThrow(/give a span/);
    expect(usageFields({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cost: 0.1 })).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cost: 0.1 });
    expect(usageFields({ input_tokens: 3, output_tokens: 2, cost: 0.1 })).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cost: 0.1 });
    expect(usageFields(undefined)).toEqual({});
  });
});

describe('batch run plan', () => {
  it('shards cover every request line once, in order, under both limits, for any line sizes and blank lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-plan-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(300), fc.boolean()), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 7 }), fc.boolean(), fc.boolean(), async (spec, maxRequests, crlf, bom) => {
        const file = join(dir, 'in.jsonl');
        const eol = crlf ? '\r\n' : '\n';
        const lines = spec.map(([n, blank], i) => (blank && i > 0 ? '' : JSON.stringify({ custom_id: `r${i}`, body: { t: 'x'.repeat(n) } })));
        writeFileSync(file, (bom ? '\uFEFF' : '') + lines.join(eol) + eol);
        const job = await planJob(file, { model: 'local/echo', maxRequests, maxBytes: 2048 });
        const seen: number[] = [];
        for (const s of job.shards) {
          expect(s.count).toBeLessThanOrEqual(maxRequests);
          expect(s.bytes).toBeLessThanOrEqual(2048);
          for await (const l of shardLines(job, s)) {
            seen.push(l.number);
            expect(JSON.parse(l.bytes.toString('utf8')).custom_id).toBe(`r${l.number - 1}`);
          }
        }
        expect(seen).toEqual(lines.flatMap((l, i) => (l ? [i + 1] : [])));
      }),
      { numRuns: 60 },
    );
  });
});

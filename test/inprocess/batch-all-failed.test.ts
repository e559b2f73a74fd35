/** A batch (or a job) that completed with every request failed is a failure to a script: exit 9, the counts on stderr. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { FLAVORS } from '../support/batch-jobs.js';

let t: CliEnv;
const bad = (id: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: 'hi' }], temperature: 7 } });
const good = (id: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: 'hi' }] } });
function file(name: string, lines: string[]): string {
  const p = join(t.dir, name);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startCliEnv({ flavor });
  });
  afterAll(() => t.close());

  it('batch create --watch of a batch whose every request failed exits 9 and says how many', async () => {
    const f = file('all-bad.jsonl', [bad('a'), bad('b')]);
    const r = await t.run(['batch', 'create', f, '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', join(t.dir, 'all-bad-out.jsonl')]);
    // Was: exit 0.
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/error: batch_\w+ completed, but all 2 requests failed: see their "error" in the results\n$/);
    const id = /(batch_\w+) completed/.exec(r.stderr)![1]!;
    const status = await t.run(['batch', 'get', id, '--exit-status']);
    expect(status.code, status.stderr).toBe(9);
  });

  it('batch run --watch of a file whose every request failed exits 9, as batch create --watch; some failed stays 0', async () => {
    const out = join(t.dir, `run-all-bad-${flavor}.jsonl`);
    const r = await t.run(['batch', 'run', file('run-all-bad.jsonl', [bad('a'), bad('b'), bad('c')]), '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', out]);
    // Was: exit 0, "3 of 3 requests failed" as a note.
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/error: job_\w+: all 3 requests failed \(see their "error" in the results; retry them: router batch run --resume job_\w+ --retry-failed --watch --results …\)\n$/);
    const some = await t.run(['batch', 'run', file('run-some-bad.jsonl', [bad('a'), good('b')]), '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', join(t.dir, 'some.jsonl')]);
    expect(some.code, some.stderr).toBe(0);
    expect(some.stderr).toMatch(/job_\w+: 1 of 2 requests failed \(retry them/);
  });
});

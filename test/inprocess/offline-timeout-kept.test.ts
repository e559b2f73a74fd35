import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { startedForAll } from '../support/for-all.js';

// --offline-timeout N gives up about N seconds after the first failed poll, not a whole doubled wait later
// (polls 50 ms apart at first, doubling: 4 s used to be given up only at the poll of 6.35 s). Checked by the waits
// it says it makes, not by the time it took, which a loaded machine stretches: they end by the timeout
// (0+0+0+1+2+1 s; they were 0+0+0+1+2+3 s), and it gave up only once the timeout had passed.
const t = startedForAll(() => startInProcessEnv());
afterEach(() => t.admin('faults', { faults: [] }));

const gaveUpAfter = (stderr: string) => Number(/no answer from the service for (\d+)s/.exec(stderr)?.[1]);
/** The seconds of the waits between failed polls, as said on stderr ("polling again in 1s"). */
const waits = (stderr: string) => [...stderr.matchAll(/polling again in (\d+)s/g)].map((m) => Number(m[1]));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('the offline timeout is kept', () => {
  it('batch run --watch: exit 8 once the timeout has passed, saying so', async () => {
    const file = join(t.dir, 'kept.jsonl');
    writeFileSync(file, ['k1', 'k2'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } })).join('\n') + '\n');
    const started = await t.run(['batch', 'run', file, '--model', 'local/echo']);
    expect(started.code, started.stderr).toBe(0);
    await t.admin('faults', { faults: ['reset,times=1000,path=/v1/batches,method=GET'] });
    const r = await t.run(['--max-retries', '0', 'batch', 'run', '--resume', started.stdout.trim(), '--watch', '--interval', '50ms', '--offline-timeout', '4']);
    expect(r.code, r.stderr).toBe(8);
    expect(gaveUpAfter(r.stderr)).toBeGreaterThanOrEqual(4);
    expect(waits(r.stderr).length).toBeGreaterThan(0);
    expect(sum(waits(r.stderr))).toBeLessThanOrEqual(4);
  });

  it('batch get --watch: the same', async () => {
    const file = join(t.dir, 'kept-get.jsonl');
    writeFileSync(file, JSON.stringify({ custom_id: 'g1', body: { messages: [{ role: 'user', content: 'hi' }] } }) + '\n');
    const created = await t.run(['batch', 'create', file, '--model', 'local/echo']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    await t.admin('faults', { faults: ['reset,times=1000,path=/v1/batches,method=GET'] });
    const r = await t.run(['--max-retries', '0', 'batch', 'get', id, '--watch', '--interval', '50ms', '--offline-timeout', '4']);
    expect(r.code, r.stderr).toBe(8);
    expect(gaveUpAfter(r.stderr)).toBeGreaterThanOrEqual(4);
    expect(waits(r.stderr).length).toBeGreaterThan(0);
    expect(sum(waits(r.stderr))).toBeLessThanOrEqual(4);
  });
});

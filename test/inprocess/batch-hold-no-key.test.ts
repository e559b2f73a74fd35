import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FLAVORS, newSpace, requestsFile, type Space } from '../support/batch-jobs.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { keyUsed, later } from '../support/spend-later.js';
import { testStreams } from '../support/inprocess.js';

// A batch hold that named no key (found by a rerun of its create: `holdFoundBatch`; or written by an older router) stayed at its
// bound for 48 hours when its batch ended naming no cost (the deployed service's, some requests completed): `usage --reconcile`
// said "names no key". Now a rerun's hold names the key and the batch's making, and a hold naming neither is taken as sent with
// the profile's key since the batch's `created_at` where the service shows the batch to that key. And a plain `batch create`
// stopped after its answer (as it printed the id) said on its rerun that it was "never answered before its id was printed".

afterEach(() => vi.useRealTimers());


describe.each(FLAVORS)('%s flavour', (flavor) => {
  let t!: CliEnv;
  const router = cliEnvPerFile((e) => (t = e), { flavor, batchDelayMs: 60_000 });
  const lines = (n: number) => (i: number) => ({ messages: [{ role: 'user', content: `write 500 words, ${n}.${i}` }], max_tokens: 200 });

  it('a create stopped as it printed its id, run again under a budget: said so, not sent again, its hold names the key and is settled by it', async () => {
    await t.admin('batches', { delay_ms: 300 });
    const s: Space = await newSpace(t, `said-${flavor}`);
    const file = requestsFile(t.dir, `said-${flavor}.jsonl`, 4, lines(1));
    // What a kill -9 right after the id was written leaves: the state folder as it was then, copied.
    const stopped = join(t.dir, `stopped-${flavor}`);
    const io = testStreams({ env: { ...t.env, ...s.env } });
    const write = io.streams.stdout.write.bind(io.streams.stdout);
    io.streams.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      if (/batch_/.test(String(chunk))) cpSync(s.state, stopped, { recursive: true });
      return write(chunk, ...rest);
    }) as typeof io.streams.stdout.write;
    expect(await main(['node', 'router', 'batch', 'create', file, '--model', 'local/lorem'], io.streams), io.stderr()).toBe(0);
    const id = io.stdout().trim();
    const env = { ...s.env, ROUTER_STATE_DIR: stopped, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: s.management };
    const again = await router(['batch', 'create', file, '--model', 'local/lorem'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(id);
    // Before: "… was never answered before its id was printed".
    expect(again.stderr).toMatch(new RegExp(`an earlier create of .* made ${id} \\(sent at [^)]+\\) and was stopped as it said so \\(its id may have been printed\\): not sent again \\(--new makes another\\)`));
    expect(again.stderr).not.toMatch(/never answered/);
    const hold = JSON.parse(readFileSync(join(stopped, 'budget-holds', `batch-${id}.json`), 'utf8'));
    expect(hold).toMatchObject({ batch_id: id, key_hash: expect.stringMatching(/^[0-9a-f]{64}$/), sent_after: expect.any(String) });

    const shown = async () => JSON.parse((await router(['batch', 'get', id, '--json'], env)).stdout);
    while ((await shown()).request_counts.completed < 1);
    await t.admin('batches', { delay_ms: 60_000 });
    await t.admin('clock', { advance_seconds: 25 * 3600 });
    const b = await shown();
    expect(b.status).toBe('expired');
    const spent = await keyUsed(t, s.key);
    if (flavor === 'spec') {
      // The service names the cost: counted once, the hold gone.
      expect(b.usage.cost).toBeCloseTo(spent, 9);
    } else {
      expect(b.usage).toBeNull();
      const r = await later(2 * 3600_000, () => router(['usage', '--reconcile', '--json'], env));
      expect(r.code, r.stderr).toBe(0);
      // Before: unsettled, "its hold names no key or no time it was sent (…found by a rerun)".
      expect(JSON.parse(r.stdout).batches).toMatchObject({ settled: [{ id, bound: hold.usd }], unsettled: [] });
      expect(JSON.parse(r.stdout).batches.settled[0].charged).toBeCloseTo(Math.min(hold.usd, spent), 9);
    }
    const u = await router(['usage', '--json'], env);
    expect(u.code, u.stderr).toBe(0);
    expect(JSON.parse(u.stdout).budgets[0]).toMatchObject({ unrecorded: 0 });
    expect(JSON.parse(u.stdout).budgets[0].spent).toBeCloseTo(spent, 9);
  });
});

describe('deployed flavour: a hold an older router wrote (no key, no send time)', () => {
  let t!: CliEnv;
  const router = cliEnvPerFile((e) => (t = e), { flavor: 'deployed', batchDelayMs: 60_000 });

  it("is settled by the profile's key since the batch's making; where the service does not show the batch, says why and until when", async () => {
    await t.admin('batches', { delay_ms: 300 });
    const s = await newSpace(t, 'older');
    const env = { ...s.env, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: s.management };
    const file = requestsFile(t.dir, 'older.jsonl', 4, (i) => ({ messages: [{ role: 'user', content: `write 500 words, ${i}` }], max_tokens: 200 }));
    const made = await router(['batch', 'create', file, '--model', 'local/lorem'], env);
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    const holdPath = join(s.state, 'budget-holds', `batch-${id}.json`);
    const { key_hash: _k, sent_after: _s, ...older } = JSON.parse(readFileSync(holdPath, 'utf8'));
    writeFileSync(holdPath, JSON.stringify(older));
    // Another workspace's batch held here too (its id known, the service shows it to another key only).
    const other = await newSpace(t, 'other');
    const foreign = await router(['batch', 'create', file, '--model', 'local/lorem'], other.env);
    expect(foreign.code, foreign.stderr).toBe(0);
    const foreignId = foreign.stdout.trim();
    const placed = new Date().toISOString();
    writeFileSync(join(s.state, 'budget-holds', `batch-${foreignId}.json`), JSON.stringify({ profile: 'default', usd: 0.01, batch_id: foreignId, time: placed }));

    const shown = async (i: string, e: Record<string, string>) => JSON.parse((await router(['batch', 'get', i, '--json'], e)).stdout);
    while ((await shown(id, env)).request_counts.completed < 1);
    await t.admin('batches', { delay_ms: 60_000 });
    await t.admin('clock', { advance_seconds: 25 * 3600 });
    expect(await shown(id, env)).toMatchObject({ status: 'expired', usage: null });
    // Marked ended as this profile's, though the service shows it to the other key only.
    const foreignHold = JSON.parse(readFileSync(join(s.state, 'budget-holds', `batch-${foreignId}.json`), 'utf8'));
    writeFileSync(join(s.state, 'budget-holds', `batch-${foreignId}.json`), JSON.stringify({ ...foreignHold, ended_at: new Date().toISOString(), completed: 1 }));
    const spent = await keyUsed(t, s.key);

    const r = await later(2 * 3600_000, () => router(['usage', '--reconcile', '--json'], env));
    expect(r.code, r.stderr).toBe(0);
    const batches = JSON.parse(r.stdout).batches;
    expect(batches.settled).toMatchObject([{ id, bound: older.usd }]);
    expect(batches.settled[0].charged).toBeCloseTo(Math.min(older.usd, spent), 9);
    const until = new Date(Date.parse(placed) + 48 * 3600_000).toISOString();
    expect(batches.unsettled).toEqual([{ id: foreignId, why: expect.stringContaining(`held until ${until}`) }]);
    const said = await later(2 * 3600_000, () => router(['usage', '--reconcile'], env));
    expect(said.stderr).toContain(`${foreignId} stays held at its bound: its hold names no key or no time it was sent`);
    const u = await router(['usage', '--json'], env);
    // Right after: the settled batch at its charge, the other still held at its bound.
    expect(JSON.parse(u.stdout).budgets[0].spent).toBeCloseTo(batches.settled[0].charged + 0.01, 9);
    // The lookup of its batch gives up --timeout after it began, retries included, as reconcile's other lookups do.
    await t.admin('faults', { faults: ['slow,delay_ms=600000,path=/batches'] });
    try {
      const bounded = await later(2 * 3600_000, () => router(['usage', '--reconcile', '--timeout', '1s'], env));
      expect(bounded.stderr).toContain(`${foreignId} stays held at its bound`);
      expect(bounded.stderr).toMatch(/no answer to GET \/batches within 1s \(--timeout\), retries included/);
    } finally {
      await t.admin('faults', { faults: [] });
    }
  });
});

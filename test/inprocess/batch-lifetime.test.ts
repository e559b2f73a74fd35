/** A batch over time on both flavours: its states while it runs, a restart of the emulator, the 24h window and the 30-day retention. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { batchesPathOf, FLAVORS } from '../support/batch-jobs.js';
import { requestLine as line } from '../support/batch-cli.js';
import { until } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

describe.each(FLAVORS)('%s flavour', (flavor) => {
  const BP = batchesPathOf(flavor);

  describe('clock, expiry, retention and restarts', () => {
    const s = startedForAll(() => startCliEnv({ batchDelayMs: 150, flavor }));

    it('shows validating and in_progress while it runs, and survives a restart without running anything twice', async () => {
      // spec: batch.states, batch.create.persisted
      const lines = Array.from({ length: 8 }, (_, i) => line(`r${i}`, `message ${i}`));
      const p = join(s.dir, 'slow.jsonl');
      writeFileSync(p, lines.join('\n'));
      const first = JSON.parse((await s.run(['batch', 'create', p, '--model', 'local/echo', '--json'])).stdout);
      const id = first.id;
      expect(first.status).toBe('validating');
      // The deployed service has results null until completed; api.md's leaves them out.
      if (flavor === 'deployed') expect(first).toMatchObject({ results: null, usage: null });
      else expect(first.results).toBeUndefined();
      // Two done, then the rest held (checked in this process, so the engine takes no step in between): the batch still
      // runs when it is looked at and restarted, however slow the machine (a poll through the CLI can take longer than
      // the 8 items of 150 ms). The restarted emulator goes at its usual pace.
      expect(await until(() => (s.emu.batches.store.get(id)?.request_counts.completed ?? 0) >= 2)).toBe(true);
      s.emu.batches.opts.delayMs = 600_000;
      const seen = JSON.parse((await s.run(['batch', 'get', id, '--json'])).stdout);
      expect(seen.request_counts.completed).toBeGreaterThanOrEqual(2);
      expect(seen.status).toBe('in_progress');
      await s.restart();
      const w = await s.run(['batch', 'get', id, '--watch', '--interval', '0.1', '--results']);
      expect(w.code).toBe(0);
      const results = w.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((r) => r.custom_id).sort()).toEqual(lines.map((_, i) => `r${i}`).sort());
      expect(new Set(results.map((r) => r.id)).size).toBe(8);
    });

    it('a batch past its 24h window expires (exit 9); results are gone after 30 days (410, exit 5)', async () => {
      // spec: batch.window-24h, batch.get.410
      const p = join(s.dir, 'exp.jsonl');
      writeFileSync(p, Array.from({ length: 20 }, (_, i) => line(`e${i}`, 'x')).join('\n'));
      const id = (await s.run(['batch', 'create', p, '--model', 'local/echo'])).stdout.trim();
      await s.admin('clock', { advance_seconds: 25 * 3600 });
      const w = await s.run(['batch', 'get', id, '--watch', '--interval', '0.05']);
      expect(w.code).toBe(9);
      expect(w.stderr).toMatch(/expired: The batch did not complete within the 24h completion window/);
      await s.admin('clock', { advance_seconds: 30 * 86400 });
      const gone = await s.run(['batch', 'get', id]);
      expect(gone.code).toBe(5);
      expect(gone.stderr).toMatch(/deleted after the 30-day retention/);
      const raw = await fetch(`${s.apiRoot}${BP}/${id}`, { headers: { authorization: `Bearer ${s.apiKey}` } });
      expect(raw.status).toBe(410);
    });

  });
});

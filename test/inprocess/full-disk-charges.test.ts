import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { fullDiskPerFile, mounted } from '../support/full-disk.js';
import { SETTLE } from '../support/until.js';
import { startEmulator } from '../../src/emulator/server.js';

// A real full file system: a small tmpfs, filled up (test/support/full-disk.ts). The charges journal
// must never hold a torn line: a line the disk had room for only in part would join the next one,
// and a kill -9 would lose both charges. A charge it cannot take is not made: its request is refused.
const { disk, fill } = fullDiskPerFile();

/** The lines of the journal's segments in `state`, in order (charge-journal.ts). */
function journalLines(state: string): string[] {
  const segments = readdirSync(state).filter((n) => /^charges\.\d+\.jsonl$/.test(n)).sort((a, b) => parseInt(a.slice(8)) - parseInt(b.slice(8)));
  return segments.flatMap((n) => readFileSync(join(state, n), 'utf8').split('\n').filter(Boolean));
}

describe.skipIf(!mounted)('the charges journal on a full disk', () => {
  it('a charge it cannot take refuses its request; what is on disk (state.json and the journal after its journal_seq) equals what was charged', async () => {
    const state = join(disk, 'charges');
    const emu = await startEmulator({ stateDir: state, port: 0 });
    const key = emu.store.firstKeys().apiKey;
    const chat = async (i: number) => {
      const res = await fetch(`${emu.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', messages: [{ role: 'user', content: `write ${i % 7} words` }] }) });
      await res.arrayBuffer();
      return res.status;
    };
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      expect(await chat(0)).toBe(200);
      fill();
      // Enough lines to fill the journal's last page and more: some fit whole, one in part, the rest not at all.
      // A request whose charge the disk cannot take is refused (503), and so is every one after it until a save lands.
      const statuses = new Set<number>();
      for (let i = 1; i <= 150; i++) statuses.add(await chat(i));
      // (200s while the journal's last page has room, if it has any.)
      expect(statuses.has(503)).toBe(true);
      expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
      // Every line the journal holds while the disk is full is whole (before: a line cut where the disk was full, then
      // the next one joined to it). Read now: the save that lands once there is room removes these segments.
      const whileFull = journalLines(state);
      expect(whileFull.length).toBeGreaterThan(0);
      for (const line of whileFull) expect(() => JSON.parse(line), line).not.toThrow();
      rmSync(join(disk, 'filler'), { force: true });
      // Room again: the save retried each second lands, and requests are answered.
      await vi.waitFor(async () => expect(await chat(151)).toBe(200), { ...SETTLE, interval: 100 });
      const charged = emu.store.workspace('default').total_usage;
      // As a kill -9 now would leave it: state.json first (a save landing meanwhile only raises journal_seq).
      const saved = JSON.parse(readFileSync(join(state, 'state.json'), 'utf8'));
      const lines = journalLines(state);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      emu.store.close();
      // The generations file alike: every line whole (a torn one would lose the next as well).
      for (const line of readFileSync(join(state, 'generations.jsonl'), 'utf8').split('\n').filter(Boolean)) expect(() => JSON.parse(line), line.slice(0, 80)).not.toThrow();
      const after = lines.map((l) => JSON.parse(l)).filter((e) => e.s > (saved.journal_seq ?? 0));
      // (A line with `k` is a key's usage, not a charge.)
      const onDisk = after.filter((e) => e.k === undefined).reduce((sum: number, e: { c: number }) => sum + e.c, saved.workspaces.default.total_usage);
      expect(after.at(-1)?.s ?? saved.journal_seq).toBeGreaterThan(0);
      // Every answer given is paid on disk (before: charges made while nothing could be written were in memory only).
      expect(onDisk).toBeCloseTo(charged, 10);
    } finally {
      process.stderr.write = stderr;
      // Room for the last save, however the test ended.
      rmSync(join(disk, 'filler'), { force: true });
      await emu.close();
    }
  });
});

import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullDiskPerFile, mounted } from '../support/full-disk.js';
import { startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { startEmulator } from '../../src/emulator/server.js';

// A real full file system: a small tmpfs, filled up (test/support/full-disk.ts).
const { disk, fill } = fullDiskPerFile();
let t: TestEnv;
let requests: string;

beforeAll(async () => {
  t = await startTestEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { model: 'local/echo', messages: [{ role: 'user', content: c }] } })).join('\n'));
});
afterAll(() => t?.close());

// The failed write's temp file is removed by a cleanup that is not awaited (the atomically
// package): it is gone when the process ends, which only a process shows.
describe.skipIf(!mounted)('a full disk: one line naming the file, exit 1, nothing half-written', () => {
  it('the config file: the old one stays whole', async () => {
    const env = { ROUTER_CONFIG_DIR: join(disk, 'config') };
    expect((await t.run(['config', 'set', 'model', 'local/echo'], { env })).code).toBe(0);
    const before = readFileSync(join(disk, 'config', 'config.json'), 'utf8');
    fill();
    const r = await t.run(['config', 'set', 'model', 'local/lorem'], { env });
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: `error: cannot write ${join(disk, 'config', 'config.json')}: disk full\n` });
    expect(readFileSync(join(disk, 'config', 'config.json'), 'utf8')).toBe(before);
    expect(readdirSync(join(disk, 'config'))).toEqual(['config.json']);
  });
});

describe.skipIf(!mounted)('the emulator on a full disk', () => {
  it('paid chats and creates are refused in words (503), a running batch waits and finishes once there is room', async () => {
    rmSync(join(disk, 'filler'), { force: true });
    const emu = await startEmulator({ stateDir: join(disk, 'emu'), port: 0, batchDelayMs: 20 });
    try {
      const env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: emu.store.firstKeys().apiKey };
      const file = join(t.dir, 'hundred.jsonl');
      writeFileSync(file, Array.from({ length: 100 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `question ${i}` }] } })).join('\n'));
      emu.batches.opts.delayMs = 3000;
      const created = await t.run(['batch', 'create', file, '--model', 'local/echo'], { env });
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      // Running, and not done before the disk is full however slow the machine (100 items of 20 ms were done before a
      // 300 ms sleep ended at load 30): each step of the batch waits 3 s until the disk is full, which the test fills
      // as soon as the batch runs (checked in this process, so the engine takes no step in between).
      expect(await until(() => emu.batches.store.get(id)?.status === 'in_progress')).toBe(true);
      const waited = emu.batches.diskWaits;
      fill();
      emu.batches.opts.delayMs = 20;
      // A paid chat whose charge the disk cannot take is refused, not answered unpaid (a kill -9 would lose
      // that charge), and so is every paid request until a save lands: 503, retried, then exit 7.
      const unpaid = await t.run(['chat', '--model', 'local/echo', 'not now'], { env });
      const words = '503 Service Unavailable: The emulator cannot save charges to its disk now; paid requests are refused until it can, so that none is answered unpaid (after 2 retries; --max-retries sets how many)\n';
      expect(unpaid).toMatchObject({ code: 7, stdout: '', stderr: `error: POST /api/v1/chat/completions: ${words}` });
      const refused = await t.run(['batch', 'create', requests, '--model', 'local/echo'], { env });
      expect(refused).toMatchObject({ code: 7, stderr: `error: POST /api/v1/batches: ${words}` });
      // The batch met the full disk (a result it could not write) and waits for room, still in progress.
      expect(await until(() => emu.batches.diskWaits > waited || emu.batches.store.get(id)?.status !== 'in_progress')).toBe(true);
      expect((await t.run(['batch', 'get', id, '--json'], { env })).stdout).toMatch(/"status":"in_progress"/);
      rmSync(join(disk, 'filler'));
      const watched = await t.run(['batch', 'get', id, '--watch', '--interval', '0.2'], { env });
      expect(watched.code, watched.stderr).toBe(0);
      const results = (await t.run(['batch', 'get', id, '--results'], { env })).stdout.trim().split('\n');
      expect(new Set(results.map((l) => JSON.parse(l).custom_id)).size).toBe(100);
      expect(results).toHaveLength(100);
    } finally {
      // Room again before the stop saves, so that a failed check above is the one reported.
      rmSync(join(disk, 'filler'), { force: true });
      await emu.close();
    }
  });

  it('router serve stopped on a full disk says the save failed (exit 1) and stops: it never keeps listening', async () => {
    rmSync(join(disk, 'filler'), { force: true });
    const server = t.spawn(['serve', '--port', '0', '--state', join(disk, 'serve-state'), '--json']);
    let stderr = '';
    server.stderr!.on('data', (d) => (stderr += d));
    const info = JSON.parse(await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).split('\n')[0]!))));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    fill();
    // A charge whose save now fails: refused (503) and given back in memory, and still owed a save at the stop.
    expect((await t.run(['chat', '--model', 'local/echo', '--max-retries', '0', 'hi'], { env: { ROUTER_API_ROOT: info.api_root, ROUTER_API_KEY: info.api_key } })).code).toBe(7);
    server.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(stderr).toMatch(new RegExp(`error: cannot write ${join(disk, 'serve-state', 'state.json')}: disk full\n$`));
    rmSync(join(disk, 'filler'), { force: true });
  });
});

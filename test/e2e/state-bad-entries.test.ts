import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { serveApi, spawnServe, type Serve } from '../support/serve-process.js';

// One entry of state.json's per-entry tables (`estimates`, `charges`, `holds`) that cannot be read, a
// value edited wrong, stopped the whole state from loading: `router serve` would not start at all.
// Such an entry is dropped with one warning line on stderr, and the rest loads: the keys and
// balances, the good entries beside it, a good hold given back. Keys and workspaces still stop the
// start (dropping one would lose it at the next save).
const dir = mkdtempSync(join(tmpdir(), 'router-state-bad-entries-'));
const state = join(dir, 'state');
const file = join(state, 'state.json');
const running: Serve[] = [];

afterAll(async () => {
  for (const s of running) {
    s.child.kill('SIGKILL');
    await s.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<{ s: Serve; stderr: () => string }> {
  const s = await spawnServe(['--state', state]);
  running.push(s);
  let stderr = '';
  s.child.stderr!.on('data', (c) => (stderr += c));
  return { s, stderr: () => stderr };
}

async function stop(s: Serve): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
  running.splice(running.indexOf(s), 1);
}

it('drops the entries that cannot be read, says so in one line, and loads the rest', async () => {
  const first = await serve();
  const keys = first.s.info;
  await stop(first.s);

  const saved = JSON.parse(readFileSync(file, 'utf8'));
  const workspace = saved.keys.find((k: { key: string }) => k.key === keys.api_key).workspace as string;
  const usage = saved.workspaces[workspace].total_usage as number;
  // A hold open at the save (a kill -9 mid-stream) took 0.25: given back at the start.
  saved.workspaces[workspace].total_usage = usage + 0.25;
  saved.holds = { '1': { w: workspace, c: 0.25 }, x: { w: workspace, c: 1 }, '2': { w: 'no-such-workspace', c: 1 } };
  saved.estimates = { '/v1/chat/completions\ntest/m': 0.4, '/v1/chat/completions\ntest/bad': 'big' };
  saved.charges = { 'batch:good:hold': 0.5, 'batch:bad:hold': null };
  writeFileSync(file, JSON.stringify(saved));

  // Before: "state.json is not an emulator state ("estimates" is not an object of numbers)", no start.
  const second = await serve();
  const credits = await serveApi(second.s, '/v1/credits', undefined, keys.management_key);
  expect(credits.status).toBe(200);
  expect(credits.json.data.total_usage).toBeCloseTo(usage, 10);
  await stop(second.s);

  const warnings = second.stderr().split('\n').filter((l) => l.includes('warning'));
  expect(warnings).toEqual([
    `emulator: warning: ${file}: dropped 4 entries that could not be read (estimates["/v1/chat/completions\\ntest/bad"], charges["batch:bad:hold"], holds["2"] and 1 more); the rest is loaded`,
  ]);
  expect(second.stderr()).toContain('gave back the holds of 1 request in flight when it last stopped ($0.25)');
  const after = JSON.parse(readFileSync(file, 'utf8'));
  expect(after.estimates).toEqual({ '/v1/chat/completions\ntest/m': 0.4 });
  expect(after.charges).toEqual({ 'batch:good:hold': 0.5 });
  expect(after.holds ?? {}).toEqual({});
});

it('drops a negative hold or charge: given back at the start, it would have charged the workspace', async () => {
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  const [workspace] = Object.keys(saved.workspaces).filter((w) => w !== 'operator');
  const usage = saved.workspaces[workspace!].total_usage as number;
  saved.holds = { '7': { w: workspace, c: -5 } };
  saved.charges = { 'batch:neg:hold': -2 };
  saved.estimates = { '/v1/chat/completions\ntest/neg': -1 };
  writeFileSync(file, JSON.stringify(saved));

  const s = await serve();
  await stop(s.s);
  // Before: the hold of -5 was settled at 0, a $5 charge ("gave back ... ($-5)"), and kept in silence.
  expect(s.stderr()).toContain(`dropped 3 entries that could not be read (estimates["/v1/chat/completions\\ntest/neg"], charges["batch:neg:hold"], holds["7"])`);
  expect(s.stderr()).not.toContain('gave back');
  const after = JSON.parse(readFileSync(file, 'utf8'));
  expect(after.workspaces[workspace!].total_usage).toBeCloseTo(usage, 10);
});

it('a key record that cannot be read still stops the start, named', async () => {
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...saved, keys: [...saved.keys, { key: 7 }] }));
  await expect(serve()).rejects.toThrow(/exited before it listened/);
});

it('a key of a workspace the file lacks stops the start, named, not as an internal error', async () => {
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  const keys = saved.keys.filter((k: { key: string }) => typeof k.key === 'string');
  keys[0] = { ...keys[0], workspace: 'no-such-workspace' };
  writeFileSync(file, JSON.stringify({ ...saved, keys }));
  // Before: "error: internal error: Cannot read properties of undefined (reading 'key')", and no exit.
  const run = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--state', state], { encoding: 'utf8', timeout: 30_000 });
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain('is not an emulator state (keys[0] names a workspace the file lacks)');
  expect(run.stderr).not.toContain('internal error');
});

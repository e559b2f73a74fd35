import { existsSync, mkdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

describe('serve and a lock left by a killed serve', () => {
  it('a lock that names this very process is stale (a restarted container gives the new serve the old pid)', async () => {
    const state = join(t.dir, 'restarted');
    mkdirSync(state);
    symlinkSync(String(process.pid), join(state, 'serve.lock'));
    // A state.json that stops the start right after the lock: what is said shows how far it went.
    writeFileSync(join(state, 'state.json'), '[]');
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    // Before: "is in use by another router serve (process <its own pid>)", at every restart.
    expect(r).toMatchObject({ code: 1, stderr: `error: ${join(state, 'state.json')} is not an emulator state (not a JSON object): fix it, or move it away to start with new keys\n` });
    expect(existsSync(join(state, 'serve.lock'))).toBe(false);
  });

  it('a lock of a serve on another machine refuses, naming that machine (two containers on one volume, each serve pid 1)', async () => {
    const state = join(t.dir, 'other-host');
    mkdirSync(state);
    const lock = join(state, 'serve.lock');
    symlinkSync(`${process.pid}:1@another-container`, lock);
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    // Before: the lock was taken as not one of ours, and two serves ran on one state.
    expect(r).toMatchObject({ code: 1, stderr: `error: --state ${state} is in use by a router serve on another-container (process ${process.pid}): stop it, or give another --state; if none runs there, remove ${lock}\n` });
    expect(readlinkSync(lock)).toBe(`${process.pid}:1@another-container`);
  });

  it('a lock of another live process still refuses', async () => {
    const state = join(t.dir, 'held');
    mkdirSync(state);
    symlinkSync(String(process.ppid), join(state, 'serve.lock'));
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    expect(r).toMatchObject({ code: 1, stderr: `error: --state ${state} is in use by another router serve (process ${process.ppid}): stop it, or give another --state\n` });
    expect(readlinkSync(join(state, 'serve.lock'))).toBe(String(process.ppid));
  });
});

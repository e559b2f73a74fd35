import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lutimesSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { sayWhySkipped } from '../support/skip-reason.js';
import { startedForAll } from '../support/for-all.js';

// A pid is known only in its process namespace: two containers on one state volume with the same
// host name (`--network host`, or a `hostname:` set alike), or a serve on the machine and one in such
// a container. The lock of a serve in another namespace names a pid that, from here, is gone or
// another process. Before: it was taken over, and two serves ran on one state (and the second,
// stopped, removed the first's lock). Now a lock names its pid namespace; one of another namespace
// holds while its serve keeps refreshing it, and is taken over once it is left stale (a restarted
// container's serve, its old one killed).
const root = spawnSync('id', ['-u'], { encoding: 'utf8' }).stdout.trim() === '0';
const unshare = !sayWhySkipped(!root || spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0, 'no pid namespace can be made here (unshare --pid needs root): the tests of a serve in another namespace skip');
const bin = resolve('bin/router.cjs');

/**
 * A serve in a pid namespace of its own, waited for until it says it listens (its lock is taken before):
 * never for a time, as a loaded machine took past 20 s to start one and a wait so bounded then failed.
 */
async function serveElsewhere(state: string): Promise<{ child: ChildProcess; stderr: () => string }> {
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath, bin, 'serve', '--port', '0', '--json', '--state', state], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const [listening] = await Promise.race([once(child.stdout!, 'data'), once(child, 'exit').then(() => [undefined])]);
  if (listening === undefined) throw new Error(`the serve in a pid namespace of its own did not start: ${stderr}`);
  return { child, stderr: () => stderr };
}

const t = startedForAll(() => startCliEnv());

describe('serve and a lock of a serve in another process namespace on this machine', () => {
  it.skipIf(!unshare || !existsSync(resolve('dist')))('a running serve in another pid namespace keeps its state: the second refuses', async () => {
    const state = join(t.dir, 'pidns');
    mkdirSync(state);
    const lock = join(state, 'serve.lock');
    let other: ChildProcess | undefined;
    try {
      other = (await serveElsewhere(state)).child;
      const text = readlinkSync(lock);
      // The other serve is pid 1 of its namespace; here that pid is another process (or none).
      expect(text).toMatch(/^1:\d+@/);
      const r = await t.run(['serve', '--port', '0', '--state', state]);
      expect(r).toMatchObject({ code: 1, stderr: `error: --state ${state} is in use by a router serve in another process namespace on ${hostname()} (process 1 there): stop it, or give another --state; if none runs there, remove ${lock}\n` });
      expect(readlinkSync(lock)).toBe(text);
    } finally {
      other?.kill('SIGKILL');
      if (other && other.exitCode === null) await new Promise((r) => other!.on('close', r));
    }
  });

  it.skipIf(!unshare || !existsSync(resolve('dist')))('a serve paused past the watch, its lock taken over, stops once it runs again: never two at once', async () => {
    const state = join(t.dir, 'paused');
    mkdirSync(state);
    const lock = join(state, 'serve.lock');
    const { child: first, stderr: firstErr } = await serveElsewhere(state);
    const firstExit = once(first, 'exit');
    let second: ChildProcess | undefined;
    try {
      const text = readlinkSync(lock);
      // The serve itself: unshare's forked child (pid 1 in its namespace), paused as `docker pause` would.
      const serve = Number(readFileSync(`/proc/${first.pid}/task/${first.pid}/children`, 'utf8').trim().split(' ')[0]);
      process.kill(serve, 'SIGSTOP');
      second = spawn(process.execPath, [bin, 'serve', '--port', '0', '--json', '--state', state], { stdio: ['ignore', 'pipe', 'ignore'] });
      await new Promise((r) => second!.stdout!.once('data', r));
      const taken = readlinkSync(lock);
      expect(taken).not.toBe(text);
      expect(taken).toMatch(new RegExp(`^${second.pid}:`));
      process.kill(serve, 'SIGCONT');
      // Before: the first went on serving and saving beside the second, and removed its lock when stopped.
      expect((await firstExit)[0]).toBe(1);
      expect(firstErr()).toContain(`error: ${lock} was taken over by ${taken}`);
      expect(readlinkSync(lock)).toBe(taken);
      expect(second.exitCode).toBeNull();
    } finally {
      first.kill('SIGKILL');
      if (second && second.exitCode === null) {
        second.kill('SIGTERM');
        await new Promise((r) => second!.on('close', r));
      }
    }
  });

  it('a lock of another namespace that is no longer refreshed is taken over (a restarted container)', async () => {
    const state = join(t.dir, 'restarted-ns');
    mkdirSync(state);
    const lock = join(state, 'serve.lock');
    symlinkSync(`1:5@${hostname()}#4026531999`, lock);
    const long = new Date(Date.now() - 3_600_000);
    lutimesSync(lock, long, long);
    // A state.json that stops the start right after the lock: what is said shows how far it went.
    writeFileSync(join(state, 'state.json'), '[]');
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    expect(r).toMatchObject({ code: 1, stderr: `error: ${join(state, 'state.json')} is not an emulator state (not a JSON object): fix it, or move it away to start with new keys\n` });
    expect(existsSync(lock)).toBe(false);
  });

  it('a guard of another namespace, left by a kill while it took over a stale lock, is taken over after the watch too', async () => {
    const state = join(t.dir, 'left-guard');
    mkdirSync(state);
    const lock = join(state, 'serve.lock');
    // A serve of this namespace killed (its lock stale), and a serve of another namespace killed in the
    // microseconds it held the guard `<lock>.<pid>` to remove that lock.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    symlinkSync(`${dead}:1@${hostname()}`, lock);
    symlinkSync(`1:5@${hostname()}#4026531999`, `${lock}.${dead}`);
    writeFileSync(join(state, 'state.json'), '[]');
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    // Before: "in use by another router serve (process 1)" until the guard was removed by hand.
    expect(r).toMatchObject({ code: 1, stderr: `error: ${join(state, 'state.json')} is not an emulator state (not a JSON object): fix it, or move it away to start with new keys\n` });
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(`${lock}.${dead}`)).toBe(false);
  });
});

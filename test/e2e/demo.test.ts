import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

// Issue 34, rough edge 2: the demo's chats, ledger lines and config stay in its own temporary folders.
it('npm run demo leaves no trace in the user\'s state or config', () => {
  const home = mkdtempSync(join(tmpdir(), 'router-demo-home-'));
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROUTER_') && !k.startsWith('XDG_')) env[k] = v;
    env.HOME = home;
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'demo.mjs')], { env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/q1: /);
    expect(readdirSync(home)).toEqual([]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}, 70_000);

it('Ctrl-C in the middle of npm run demo stops the emulator and removes its folder (exit 130)', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'router-demo-tmp-'));
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROUTER_') && !k.startsWith('XDG_')) env[k] = v;
    env.TMPDIR = tmp;
    // Its own process group, as a shell gives it: Ctrl-C goes to the demo, the emulator and the step running.
    const demo = spawn(process.execPath, [join(root, 'scripts', 'demo.mjs')], { env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((r) => demo.once('exit', (code) => r(code)));
    let stderr = '';
    const apiRoot = await new Promise<string>((resolve) => demo.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /emulator running at (\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    }));
    process.kill(-demo.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
    await expect(fetch(`${apiRoot}/v1/models`)).rejects.toThrow();
    expect(stderr).not.toMatch(/\n\s+at /);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 30_000);

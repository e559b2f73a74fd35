import { spawnSync } from 'node:child_process';
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

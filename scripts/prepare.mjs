// npm's `prepare` in a git checkout (npm install there): the commit-msg hook, then the build. `npm pack`
// runs `prepack` (the build too) just before, and the packed package.json has no `prepare` (scripts/pack.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (!['pack', 'publish'].includes(process.env.npm_command ?? '')) {
  // Only in a git checkout of this repository: .githooks/commit-msg refuses subjects over 72 characters.
  if (existsSync(join(root, '.git')) && existsSync(join(root, '.githooks', 'commit-msg'))) {
    spawnSync('git', ['config', 'core.hooksPath', '.githooks'], { cwd: root, stdio: 'ignore' });
  }
  const npm = process.env.npm_execpath;
  const r = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
}

// npm's `prepare` in a git checkout (npm install there): the build. `npm pack` runs `prepack` (the
// build too) just before, and the packed package.json has no `prepare` (scripts/pack.mjs).
import { spawnSync } from 'node:child_process';

if (!['pack', 'publish'].includes(process.env.npm_command ?? '')) {
  const npm = process.env.npm_execpath;
  const r = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
}

// `npm pack` ships dist/ built, and a package.json without `prepare`: an installed package has
// nothing to build, and npm warns about every install script ("not yet covered by allowScripts").
// prepack builds and takes `prepare` out; postpack puts package.json back as it was.
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, '.package.json.packing');

if (process.argv[2] === 'after') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  // A pack that failed or was stopped before postpack left the stripped package.json: the kept one is the real one.
  if (existsSync(kept)) renameSync(kept, manifest);
  const npm = process.env.npm_execpath;
  const build = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit', cwd: root }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', cwd: root });
  if (build.status !== 0) process.exit(build.status ?? 1);
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}


import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { processAlive } from '../../src/internal/process.js';

const run = promisify(execFile);

/** What `npm pack` takes from the checkout (package.json's files, with the README and the prepack script). */
const PACKED = ['bin', 'dist', 'completions', 'docs', 'LICENSE', 'README.md', 'scripts/pack.mjs', 'package.json'];

/** Every file of `path` (a file or a folder), in a fixed order. */
function filesOf(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).sort().flatMap((name) => filesOf(join(path, name)));
}

/** A hash of the names and contents of what is packed: a new build (its id is in dist) or any changed file is another package. */
function packedHash(root: string): string {
  const hash = createHash('sha256');
  for (const file of PACKED.flatMap((part) => filesOf(join(root, part)))) hash.update(`${file.slice(root.length)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The package as users install it: `npm pack` as it runs in the checkout (prepack takes `prepare` out), from a
 * copy of the built package whose build is a no-op (dist is built), then `npm install` of the tarball into a
 * prefix of its own. Made once for what is packed (a pack and an install take 2 min at load 20 on two cores) and
 * kept in node_modules/.cache/router-installed/<hash>: its prefix (read only: a test that writes beside the
 * package links its node_modules) and what the install said. Made in a folder of this process's and renamed into
 * place, so that two runs at once each get a whole one; other packages kept there are removed.
 */
export async function installedPackage(root: string): Promise<{ prefix: string; installLog: string }> {
  const cache = join(root, 'node_modules', '.cache', 'router-installed');
  const kept = join(cache, packedHash(root));
  if (!existsSync(join(kept, 'install.log'))) {
    const work = join(cache, `making-${process.pid}`);
    rmSync(work, { recursive: true, force: true });
    const stage = join(work, 'stage');
    for (const part of PACKED.slice(0, -1)) cpSync(join(root, part), join(stage, part), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    writeFileSync(join(stage, 'package.json'), JSON.stringify({ ...pkg, scripts: { ...pkg.scripts, build: 'node -e 0' } }, null, 2));
    mkdirSync(join(work, 'packs'));
    await run('npm', ['pack', '--silent', '--pack-destination', join(work, 'packs')], { cwd: stage });
    const tarball = join(work, 'packs', readdirSync(join(work, 'packs')).find((name) => name.endsWith('.tgz'))!);
    const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--prefix', join(work, 'prefix'), tarball], { cwd: work });
    writeFileSync(join(work, 'install.log'), install.stdout + install.stderr);
    rmSync(stage, { recursive: true, force: true });
    for (const name of readdirSync(cache)) {
      const maker = /^making-(\d+)$/.exec(name);
      if (maker ? !processAlive(Number(maker[1])) : name !== kept.slice(cache.length + 1)) rmSync(join(cache, name), { recursive: true, force: true });
    }
    try {
      renameSync(work, kept);
    } catch {
      // Another run put its own there meanwhile: the same package.
      rmSync(work, { recursive: true, force: true });
    }
  }
  return { prefix: join(kept, 'prefix'), installLog: readFileSync(join(kept, 'install.log'), 'utf8') };
}

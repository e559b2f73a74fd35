// src/**/*.ts to dist/**/*.js, one file at a time with esbuild (~0.3 s; tsc takes ~4 s, most of it checking
// types). The same files and import paths tsc would write: tsconfig.json has isolatedModules, so that tsc
// refuses what a per-file transpiler cannot translate alone. Types are checked, and dist/**/*.d.ts written,
// by `tsc --emitDeclarationOnly` in `npm run build` and by `npm run lint`.
import { build } from 'esbuild';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative(root, path)] : [];
  });

await build({
  absWorkingDir: root,
  entryPoints: sources(src),
  outdir: 'dist',
  outbase: 'src',
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  tsconfig: 'tsconfig.json',
  logLevel: 'warning',
  // This build's id, first line of every file: scripts/bundle.mjs writes it into the bundles made from
  // these modules, and bin/router.cjs runs a bundle only when its id is the modules' (file times do not
  // survive npm pack and install; a bare tsc since the build writes modules without it).
  banner: { js: `/* router build ${randomBytes(8).toString('hex')} */` },
});

import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The types of router-cli, router-cli/kit and router-cli/batch as TypeScript finds them in a program
// that has the package installed, under each module resolution a program may use: node10 (`"module":
// "commonjs"`'s default) reads no `exports`, only `types` and `typesVersions`. TypeScript's own
// resolver, over the package as it is installed: dist's declarations are the src files they are made from.
const ROOT = resolve(import.meta.dirname, '..', '..');
const INSTALLED = '/app/node_modules/router-cli';

function onDisk(path: string): string {
  if (path === INSTALLED) return ROOT;
  if (!path.startsWith(`${INSTALLED}/`)) return '/nonexistent';
  const inside = path.slice(INSTALLED.length + 1);
  const declared = /^dist\/(.+)\.d\.ts$/.exec(inside);
  return join(ROOT, declared ? `src/${declared[1]}.ts` : inside);
}

const host: ts.ModuleResolutionHost = {
  fileExists: (path) => existsSync(onDisk(path)),
  readFile: (path) => (existsSync(onDisk(path)) ? readFileSync(onDisk(path), 'utf8') : undefined),
  directoryExists: (path) => path === '/app' || path === '/app/node_modules' || existsSync(onDisk(path)),
  realpath: (path) => path,
};

const resolutions = {
  node10: { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 },
  node16: { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 },
  nodenext: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
};

describe('the types of each entry point, as a program that installed the package finds them', () => {
  for (const [name, options] of Object.entries(resolutions)) {
    it(`moduleResolution ${name}`, () => {
      const found: Record<string, string | undefined> = {};
      for (const from of ['/app/main.ts', '/app/main.mts', '/app/main.cts']) {
        for (const [spec, file] of [['router-cli', 'client'], ['router-cli/kit', 'kit'], ['router-cli/batch', 'batch']]) {
          const mode = from.endsWith('.mts') ? ts.ModuleKind.ESNext : from.endsWith('.cts') ? ts.ModuleKind.CommonJS : undefined;
          const r = ts.resolveModuleName(spec!, from, { ...options, strict: true }, host, undefined, undefined, mode);
          found[`${from} ${spec}`] = r.resolvedModule?.resolvedFileName;
          expect(found[`${from} ${spec}`], `${spec} from ${from}`).toBe(`${INSTALLED}/dist/${file}/index.d.ts`);
        }
      }
    });
  }
});

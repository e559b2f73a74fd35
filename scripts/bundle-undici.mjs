// undici in the CLI bundle, past leanUndici() (scripts/bundle-plugins.mjs): its parts a one-shot chat
// never runs in chunks of their own, and tables it builds at load that the client need not have.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Parts of undici (under undici/lib/: the module that requires them, what it requires, the kind of
 * stand-in) that a one-shot chat never runs, each in a chunk of its own (dist/cli.chunks/), read and
 * compiled only by a run that needs it: ~175 KB less of the pack to read at every start. HTTP/2
 * (node:http2 too), used only when a server offers it, which needs allowH2: never here. The parser
 * without SIMD (72 KB of base64), which undici takes only where WebAssembly SIMD fails. fetch's
 * body extraction (with FormData, webidl, MIME sniffing), for a FormData body: router sends none.
 */
const OWN_CHUNK = {
  'dispatcher/client.js': { './client-h2.js': 'function' },
  'dispatcher/client-h1.js': { '../llhttp/llhttp-wasm.js': 'value', '../web/fetch/body.js': 'value' },
};

/** How a stand-in of ownChunk() gets the module `path` (relative to dist/): its chunk, or (no split) itself. */
export const ownChunkLoad = (path, split) => (split ? `__chunkNow(import(${JSON.stringify(`own-chunk:${path}`)})).real` : `require(${JSON.stringify(path)})`);

/**
 * The stand-ins of OWN_CHUNK, and `own-chunk:PATH`: a module, in a chunk of its own, that exports the
 * module at PATH (relative to dist/) as `real`. `__chunkNow(import(...))` is made a require of that
 * chunk (scripts/bundle-split.mjs). `split`: false for a bundle in one file (bench/floor.mjs), where
 * the stand-ins only load the modules when first used.
 */
export function ownChunk(split = true) {
  return {
    name: 'own-chunk',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.namespace !== 'file' || args.pluginData?.real) return undefined;
        const from = Object.keys(OWN_CHUNK).find((file) => args.importer.endsWith(`/node_modules/undici/lib/${file}`) && OWN_CHUNK[file][args.path]);
        if (!from) return undefined;
        const real = (await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: { real: true } })).path;
        // The bundle names modules by path: relative, so that no path of the build machine is in it.
        return { path: relative(dist, real), namespace: 'own-chunk-stand-in', pluginData: { kind: OWN_CHUNK[from][args.path] } };
      });
      b.onLoad({ filter: /.*/, namespace: 'own-chunk-stand-in' }, (args) => ({
        loader: 'js',
        resolveDir: dist,
        contents:
          args.pluginData.kind === 'function'
            ? `let real; const load = () => (real ??= ${ownChunkLoad(args.path, split)});\nmodule.exports = (...args) => load()(...args);\n`
            : `module.exports = ${ownChunkLoad(args.path, split)};\n`,
      }));
      b.onResolve({ filter: /^own-chunk:/ }, (args) => ({ path: args.path.slice('own-chunk:'.length), namespace: 'own-chunk' }));
      // require(), not import: the module's exports as they are (an import would copy a Buffer's every byte as a property).
      b.onLoad({ filter: /.*/, namespace: 'own-chunk' }, (args) => ({ loader: 'js', resolveDir: dist, contents: `export const real = require(${JSON.stringify(args.path)});\n` }));
    },
  };
}

/**
 * llhttp's constants for undici's HTTP/1 client, which reads only a few of its tables (ERROR, TYPE):
 * those tables as the module has them, found at build. The module builds ~30 more (methods, statuses,
 * character maps) at every start. One that reads the whole module some other way gets it whole.
 */
export function leanParserConstants() {
  const require = createRequire(import.meta.url);
  return {
    name: 'lean-parser-constants',
    setup(b) {
      b.onResolve({ filter: /[\\/]llhttp[\\/]constants(\.js)?$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/.test(args.importer)) return undefined;
        const source = readFileSync(args.importer, 'utf8');
        const use = /\bconstants\.(\w+)\b(?!['"])/g; // not the module's own name, in the require
        const names = [...new Set([...source.matchAll(use)].map((m) => m[1]))];
        if (source.replace(use, '').match(/\bconstants\b(?!\.js)/g)?.length !== 1) return undefined; // used otherwise than constants.NAME
        const real = require(require.resolve(args.path, { paths: [dirname(args.importer)] }));
        if (!names.every((name) => real[name] && typeof real[name] === 'object')) return undefined;
        return { path: 'llhttp-constants', namespace: 'lean-parser-constants', pluginData: Object.fromEntries(names.map((name) => [name, real[name]])) };
      });
      b.onLoad({ filter: /.*/, namespace: 'lean-parser-constants' }, (args) => ({
        loader: 'js',
        contents: Object.entries(args.pluginData).map(([name, table]) => `exports.${name} = ${JSON.stringify(table)};`).join('\n'),
      }));
    },
  };
}

/**
 * undici's search tree of well-known header names (core/tree.js), built at load (~200 names, ~90 KB
 * of nodes), gives a response's header name in lower case. Without it undici lowercases the name
 * itself (core/util.js: `tree.lookup(name) ?? name.toString('latin1').toLowerCase()`): the same
 * string, made per header rather than looked up.
 */
export function noHeaderTree() {
  return {
    name: 'no-header-tree',
    setup(b) {
      b.onResolve({ filter: /^\.\/tree(\.js)?$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]undici[\\/]lib[\\/]core[\\/]util\.js$/.test(args.importer)) return undefined;
        const uses = readFileSync(args.importer, 'utf8').match(/\btree\b.*/g) ?? [];
        // Only as the fallback above: otherwise undici gets its tree.
        if (!uses.every((line) => /^tree\.lookup\(value\) \?\? value\.toString\('latin1'\)\.toLowerCase\(\)$|^tree \} = require\('\.\/tree'\)$/.test(line))) return undefined;
        return { path: 'no-header-tree', namespace: 'no-header-tree' };
      });
      b.onLoad({ filter: /.*/, namespace: 'no-header-tree' }, () => ({ loader: 'js', contents: 'exports.tree = { lookup: () => null };' }));
    },
  };
}

/** The file beside the bundle that holds undici's parser with SIMD (parserFile()); bin/router.cjs reads it too. */
export const PARSER_FILE = 'llhttp-simd.wasm';

/**
 * undici's HTTP parser with SIMD (llhttp: 50 KB of WebAssembly, which undici keeps as base64) read
 * from PARSER_FILE, written to `dir` beside the bundle: bin/router.cjs has V8 compile those bytes on
 * its background threads while the bundle loads, and undici's own compile of the same bytes, at the
 * first connection, takes the module V8 made. Nor is the base64 decoded at each start.
 */
export function parserFile(dir = dist) {
  const require = createRequire(import.meta.url);
  return {
    name: 'parser-file',
    setup(b) {
      b.onResolve({ filter: /[\\/]llhttp_simd-wasm(\.js)?$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/.test(args.importer)) return undefined;
        const bytes = require(require.resolve(args.path, { paths: [dirname(args.importer)] }));
        if (!Buffer.isBuffer(bytes)) return undefined; // not as this undici keeps it: bundled as it is
        writeFileSync(join(dir, PARSER_FILE), bytes);
        return { path: PARSER_FILE, namespace: 'parser-file' };
      });
      // __dirname: the bundle's folder, as the launcher runs it.
      b.onLoad({ filter: /.*/, namespace: 'parser-file' }, () => ({ loader: 'js', contents: `module.exports = require('node:fs').readFileSync(require('node:path').join(__dirname, ${JSON.stringify(PARSER_FILE)}));` }));
    },
  };
}

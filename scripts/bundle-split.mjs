// The CLI bundle in chunks (scripts/bundle.mjs): esbuild splits the CLI at its import()s into chunks
// (ES modules), each made CommonJS, a function of (exports, require, module, __filename, __dirname,
// __bundleUrl). The chunks a one-shot chat loads go in one script, the pack (dist/cli.bundle.cjs, one
// file read, one code cache); every other chunk is a file of its own under dist/cli.chunks/, read and
// compiled only by the run that loads it (a command's, a flag's). bin/router.cjs links them.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

/** The entry chunk's name: the pack always holds it. */
export const ENTRY = 'main.js';

const PARAMS = 'exports, require, module, __filename, __dirname, __bundleUrl';

/**
 * Splits `entry` and what it imports into chunks; resolves with a Map of chunk name (as the chunks
 * require each other: "./name") to the chunk's function expression.
 */
export async function splitBundle({ entry, external, plugins }) {
  const result = await build({
    entryPoints: { main: entry },
    outdir: '/chunks',
    write: false,
    bundle: true,
    splitting: true,
    chunkNames: '[name]-[hash]',
    entryNames: '[name]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    charset: 'ascii',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    external,
    define: { 'import.meta.url': '__bundleUrl' },
    plugins,
  });
  const chunks = new Map();
  for (const file of result.outputFiles) {
    if (!file.path.endsWith('.js')) continue;
    // Every import (static, or import() made a require()) becomes a require of "./name": bin/router.cjs
    // hands each chunk a require that finds chunks by that name and anything else as node would.
    const { code } = await transform(file.text, { format: 'cjs', target: 'node20', charset: 'ascii', minifyWhitespace: true, minifySyntax: true, supported: { 'dynamic-import': false }, logLevel: 'warning' });
    // A CommonJS package imported with import() (@inquirer/prompts, ajv) is a chunk whose one export is
    // its module.exports as default: its named exports too, as node's import() of it and the bundle's
    // own interop give them (`const { input } = await import('@inquirer/prompts')`).
    const commonJs = /export default require_[\w$]+\(\);?\s*$/.test(file.text) ? '\nmodule.exports=Object.assign({},module.exports.default,{default:module.exports.default});' : '';
    // Strict, as each chunk was: an ES module.
    chunks.set(basename(file.path), `function (${PARAMS}) {"use strict";\n${direct(code)}${commonJs}}`);
  }
  if (!chunks.has(ENTRY)) throw new Error(`esbuild wrote no ${ENTRY}`);
  return chunks;
}

/**
 * A chunk's exports as the chunks that import it read them: its own exports object (each export a
 * getter), not a copy of it made for CommonJS callers (a getter per export again, at every start) and
 * a copy of that for each import(). Only chunks require chunks.
 */
function direct(code) {
  const exports = code.match(/module\.exports=__toCommonJS\((\w+)\)/g) ?? [];
  if (exports.length > 1) throw new Error('a chunk with two module.exports: scripts/bundle-split.mjs needs a look');
  const linked = code.replace(/module\.exports=__toCommonJS\((\w+)\)/, 'module.exports=$1').replace(/__toESM\(require\("(\.\/[^"]+)"\)\)/g, 'require("$1")');
  return nodeNamespaces(chunkNow(linked));
}

/** An object whose prototype is a node builtin and whose `default` is the builtin: its ES module namespace, as read. */
const NODE_NAMESPACE = 'var __nodeNamespace=m=>Object.create(m,{default:{value:m,enumerable:!0}});';

/**
 * A node builtin imported as an ES module (`import process from 'node:process'`, `await import('node:fs')`):
 * esbuild's __toESM copies each of its exports into a getter (a closure) on a new object at each import:
 * ~100 for node:fs or node:process, ~60 KB a copy, and a one-shot chat made six (~200 KB of its young
 * generation, one of its two scavenges). An object that reads them through its prototype reads the
 * same live values, and a call of a named import is `(0, ns.name)(…)` either way.
 */
function nodeNamespaces(code) {
  if (!/__toESM\(require\("node:/.test(code)) return code;
  return NODE_NAMESPACE + code.replace(/__toESM\(require\("(node:[\w/]+)"\)\)/g, '__nodeNamespace(require("$1"))');
}

/**
 * `__chunkNow(import(x))` (scripts/bundle-plugins.mjs, ownChunk()): the chunk of x, required at once.
 * The import() made esbuild put x in a chunk of its own; the chunks' require is synchronous.
 */
function chunkNow(code) {
  const out = code.replace(/__chunkNow\(Promise\.resolve\(\)\.then\(\(\)=>(require\("\.\/[^"]+"\))\)\)/g, '$1');
  if (out.includes('__chunkNow(')) throw new Error('a __chunkNow(import()) esbuild wrote in another form: scripts/bundle-split.mjs needs a look');
  return out;
}

/**
 * The pack: one function expression that hands each chunk of `names` to its argument, `define(name,
 * fn)`, uncalled. It starts with the build id, as bin/router.cjs reads it.
 */
export function packChunks(id, chunks, names) {
  const parts = [`/* router ${id} */ (function (define) {`];
  for (const name of names) parts.push(`define(${JSON.stringify(name)}, ${chunks.get(name)});`);
  parts.push('})');
  return parts.join('\n');
}

/** Writes every chunk not in `packed` to `dir` as NAME.cjs: its function expression after the build id. */
export function writeChunks(dir, id, chunks, packed) {
  mkdirSync(dir, { recursive: true });
  for (const [name, fn] of chunks) {
    if (!packed.has(name)) writeFileSync(join(dir, name.replace(/\.js$/, '.cjs')), `/* router ${id} */ (${fn})`, 'latin1');
  }
}

/** esbuild's helpers atop a chunk (and ours): a chunk's top level runs them whatever else it does. */
const HELPERS = new Set(['__export', '__copyProps', '__toCommonJS', '__nodeNamespace']);

/**
 * The chunks of `dir` whose top level alone ran in the call that left V8's coverage in `coverageDir`
 * (NODE_V8_COVERAGE): besides the helpers and the getters of their exports, none of their functions
 * ran. Their importers need them only if a later call uses them (lazyImports()).
 */
export function topLevelOnly(coverageDir, dir) {
  const folder = `${pathToFileURL(dir).href}/`;
  const names = new Set();
  for (const file of readdirSync(coverageDir)) {
    for (const { url, functions } of JSON.parse(readFileSync(join(coverageDir, file), 'utf8')).result) {
      if (!url.startsWith(folder) || !url.endsWith('.cjs')) continue;
      const source = readFileSync(new URL(url), 'latin1');
      // The largest two: the script, then the chunk's function (its top level).
      const [, chunk, ...inner] = functions.map(({ functionName, ranges: [r] }) => ({ functionName, ...r })).sort((a, b) => b.endOffset - b.startOffset - (a.endOffset - a.startOffset));
      const getter = (f) => /^\(\)=>[\w$]+$/.test(source.slice(f.startOffset, f.endOffset));
      if (chunk?.count > 0 && !inner.some((f) => f.count > 0 && !HELPERS.has(f.functionName) && !getter(f))) names.add(basename(url).replace(/\.cjs$/, '.js'));
    }
  }
  return names;
}

/**
 * The chunks with each import of a chunk of `lazy` made lazy: `import_x=require("./x")` becomes a bare
 * `import_x`, and each use of import_x `(import_x??=require("./x"))`, so the chunk is required where
 * one of its exports is first read, not where it is imported. A one-shot chat ran only the top level
 * of ~45 chunks (attachments, tool calls, budget holds, schemas, cost bounds...): ~70 KB that every
 * call read, deserialised and ran. Their top level then runs later, or never: it must only declare
 * (test/e2e/bundle-contents.test.ts checks that it has no statement of its own beyond esbuild's).
 */
export function lazyImports(chunks, lazy) {
  const out = new Map();
  for (const [name, fn] of chunks) {
    let code = fn;
    for (const [, local, target] of fn.matchAll(/(import_[\w$]+)=require\("\.\/([^"]+)"\)/g)) {
      if (!lazy.has(target)) continue;
      const uses = new RegExp(`(?<![\\w$])${local.replaceAll('$', '\\$')}(?![\\w$])`, 'g');
      // The declaration, set aside while its uses are rewritten, is a bare name again.
      code = code.replace(`${local}=require("./${target}")`, '\0').replace(uses, () => `(${local}??=require("./${target}"))`).replace('\0', local);
    }
    out.set(name, code);
  }
  return out;
}

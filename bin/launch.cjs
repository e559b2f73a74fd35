'use strict';
// Starts the CLI from dist/cli.bundle.cjs with the code V8 compiled for it in a training call
// (scripts/bundle.mjs makes both): one file read instead of fifty modules, little parsing.
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const vm = require('node:vm');

const dist = join(__dirname, '..', 'dist');
const file = join(dist, 'cli.bundle.cjs');

/** Where the code cache of a bundle is: V8 takes a cache only from the node that made it. */
function cachePath(source) {
  const id = /^\/\* router (\w+) \*\//.exec(source)?.[1];
  return join(dist, `cli.bundle.${id}.${process.version}.cache`);
}

/**
 * The bundle's exports, its script and where its code cache goes; undefined when there is no
 * bundle as new as dist/cli, no code cache for this node (compiling the whole bundle would be
 * slower than loading the modules), or a bundle that does not load.
 */
function loadBundle() {
  let source;
  let cache;
  let cachedData;
  try {
    // A bundle older than the compiled modules (a bare `tsc` since the build) would run old code.
    if (statSync(file).mtimeMs < statSync(join(dist, 'cli', 'main.js')).mtimeMs) return undefined;
    source = readFileSync(file, 'latin1'); // the bundle is ASCII
    cache = cachePath(source);
    cachedData = process.env.ROUTER_TRAIN_CODE_CACHE ? undefined : readFileSync(cache);
  } catch {
    return undefined;
  }
  // undici's HTTP parser is WebAssembly: V8's baseline compiler alone (no optimizing compile on a
  // background thread, which the process waited for at exit) makes a one-shot call faster and ~35 MB
  // smaller. Set once, before anything is compiled: V8 takes a code cache only under the flags it was
  // made with, and the CLI changes none as it runs.
  require('node:v8').setFlagsFromString('--liftoff-only');
  try {
    const script = new vm.Script(source, { filename: file, cachedData });
    const module = { exports: {} };
    // This file's own require: it finds packages as one made for the bundle would (both look in the
    // package's node_modules), without loading node:module (~3 ms).
    script.runInThisContext()(module.exports, require, module, file, dist);
    return { main: module.exports.main, script, cache };
  } catch {
    return undefined; // a damaged bundle: the modules still run
  }
}

/** Runs the CLI from the bundle; undefined when there is none. */
async function runBundle(argv) {
  const bundle = loadBundle();
  if (!bundle) return undefined;
  const code = await bundle.main(argv);
  // Set by scripts/bundle.mjs only: record what this call compiled.
  if (process.env.ROUTER_TRAIN_CODE_CACHE) writeFileSync(bundle.cache, bundle.script.createCachedData());
  return code;
}

/**
 * `router --version`, or the root help, from dist/cli/quick.cjs (scripts/bundle.mjs): CommonJS, so
 * node's ES module loader is not started. undefined without one as new as dist/cli/quick.js.
 */
async function runQuick(argv) {
  const script = join(dist, 'cli', 'quick.cjs');
  try {
    if (statSync(script).mtimeMs < statSync(join(dist, 'cli', 'quick.js')).mtimeMs) return undefined;
  } catch {
    return undefined;
  }
  return require(script).main(argv);
}

module.exports = { loadBundle, runBundle, runQuick };

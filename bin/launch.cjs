'use strict';
// Starts the CLI from dist/cli.bundle.cjs with the code V8 compiled for it in a training call
// (scripts/bundle.mjs makes both): one file read instead of fifty modules, little parsing.
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
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
  // V8 takes a cache only under the flags it was made with, and the CLI sets this one before any
  // request (src/cli/jit-flags.ts). It is off again while the bundle runs up to there, so that the
  // stream fast path's WebAssembly compiles optimizable (src/client/fast-delta.ts).
  const v8 = require('node:v8');
  v8.setFlagsFromString('--liftoff-only');
  try {
    const script = new vm.Script(source, { filename: file, cachedData });
    // Off, with the two flags it turned off as it was set: else no WebAssembly compiled from here
    // on is ever optimized.
    v8.setFlagsFromString('--no-liftoff-only');
    v8.setFlagsFromString('--wasm-tier-up');
    v8.setFlagsFromString('--wasm-dynamic-tiering');
    const module = { exports: {} };
    script.runInThisContext()(module.exports, createRequire(file), module, file, dist);
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
  // Set by scripts/bundle.mjs only: record what this call compiled, under the flags it was compiled
  // with (V8 checks them at load): those the CLI changes as it runs (src/cli/jit-flags.ts) put back.
  if (process.env.ROUTER_TRAIN_CODE_CACHE) {
    const v8 = require('node:v8');
    v8.setFlagsFromString('--liftoff-only');
    v8.setFlagsFromString('--turbofan');
    writeFileSync(bundle.cache, bundle.script.createCachedData());
  }
  return code;
}

module.exports = { loadBundle, runBundle };

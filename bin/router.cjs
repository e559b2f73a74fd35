#!/usr/bin/env node
'use strict';
// CommonJS by its name (.cjs: node reads no package.json to tell; 0.6 M instructions a call): node's
// ES module loader is only started when a command needs it. The command is `router` (package.json's "bin").
// Starts the CLI from dist/cli.bundle.cjs with the code V8 compiled for it in a training call
// (scripts/bundle.mjs makes both): one file read instead of fifty modules, little parsing. What a
// one-shot chat does not run is in chunks under dist/cli.chunks/, each read when a run needs it.
// The launcher is this file, not a module of its own: node's require of one cost every call ~1.4 M
// instructions (callgrind), more than compiling its code. Required (tests, scripts/bundle.mjs), it
// runs nothing and exports loadBundle, runBundle and runQuick.
const { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } = require('node:fs');
const { isAbsolute, join } = require('node:path');
const vm = require('node:vm');

const dist = join(__dirname, '..', 'dist');
/** undici's parser, beside the bundle (scripts/bundle-undici.mjs). */
const PARSER_FILE = 'llhttp-simd.wasm';
const file = join(dist, 'cli.bundle.cjs');

/** The id atop a bundle (`/* router <id> *\/`, scripts/bundle.mjs). */
const bundleId = (source) => /^\/\* router (\w+) \*\//.exec(source)?.[1];

/** The build id atop a compiled module (`/* router build <id> *\/`, scripts/build-js.mjs); throws without the file. */
function moduleId(file) {
  const head = Buffer.alloc(48);
  const fd = openSync(file, 'r');
  try {
    return /^\/\* router build (\w+) \*\//.exec(head.toString('latin1', 0, readSync(fd, head, 0, head.length, 0)))?.[1];
  } finally {
    closeSync(fd);
  }
}

/**
 * A file's bytes, read into `into` when it is large enough: the bundle's code cache goes where the
 * bundle's source was read (V8 reads a cache only while it compiles), as each fresh page of memory
 * costs a page fault (~20 us each on the 2-core machine of the bench: ~180 fewer a call). `spare`:
 * a new buffer twice the file's size, whose pages cost nothing until written: the code cache, larger
 * than its bundle (~1.25x), then fits where the bundle was read.
 */
function readBytes(path, into, spare = false) {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const room = into ? into.buffer.byteLength - into.byteOffset : 0;
    const buf = room >= size ? Buffer.from(into.buffer, into.byteOffset, room) : Buffer.allocUnsafeSlow(spare ? 2 * size : size);
    let read = 0;
    for (let n; read < size && (n = readSync(fd, buf, read, size - read, read)) > 0; ) read += n;
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Where the build's code cache of a bundle is: V8 takes a cache only from the node that made it. */
function cachePath(source) {
  return join(dist, `cli.bundle.${bundleId(source)}.${process.version}.cache`);
}

/**
 * Where this machine's own code cache of a file of the package is, for a node other than the build's
 * (an installed package is built once, run by whatever node the user has): the user's cache folder
 * (XDG_CACHE_HOME, else ~/.cache), never the package's folder (shared, often not the user's).
 */
function ownCachePath(name) {
  const { XDG_CACHE_HOME: xdg, HOME: home } = process.env;
  const base = xdg && isAbsolute(xdg) ? xdg : home && isAbsolute(home) ? join(home, '.cache') : undefined;
  return base && join(base, 'router', 'code', `${name}.${process.version}.${process.arch}${optionsTag()}.cache`);
}

/**
 * node's options of this call (its command line and NODE_OPTIONS), as a short tag; none: ''. V8 takes
 * a code cache only under the flags it was made with: a cache made under other options is kept apart,
 * or calls with and without them would each reject the other's and compile everything again.
 */
function optionsTag() {
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  if (!options) return '';
  let hash = 0x811c9dc5; // FNV-1a: node:crypto would cost every call its load
  for (let i = 0; i < options.length; i++) hash = Math.imul(hash ^ options.charCodeAt(i), 0x01000193) >>> 0;
  return `.o${hash.toString(16)}`;
}

/** The first of `paths` that reads, with its path; none: `{}`. */
function readFirst(paths, into) {
  for (const path of paths) {
    if (!path) continue;
    try {
      return { path, data: readBytes(path, into) };
    } catch {
      /* the next */
    }
  }
  return {};
}

/** Writes a code cache whole or not at all (two calls at once each write their own, then one wins); a folder not writable: none. */
function keepCache(path, script) {
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, path);
  } catch {
    /* no cache: the next call compiles again */
  }
}

/** How long a code cache of another build stays in the folder after it was made: another install may still use it. */
const OTHER_BUILDS_KEPT_MS = 30 * 24 * 3600 * 1000;

/**
 * Removes the code caches of other builds (and a call's temp file it left, killed) made long ago:
 * each upgrade would otherwise leave ~0.5 MB a node version behind for good. Run when a new bundle
 * cache is kept, once a build and node: rarely. One still used is made again by its next call.
 */
function pruneOthers(folder, id) {
  const { readdirSync, rmSync, statSync } = require('node:fs');
  try {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if ((!name.includes(`.${id}.`) || name.endsWith('.tmp')) && Date.now() - statSync(path).mtimeMs > OTHER_BUILDS_KEPT_MS) rmSync(path, { force: true });
    }
  } catch {
    /* a folder not ours to list, or a file gone since: nothing to do */
  }
}

/** ROUTER_TRACE_START=1: one line on stderr saying how this call started (the bundle, or the modules and why). */
function trace(how) {
  if (process.env.ROUTER_TRACE_START) process.stderr.write(`router: ${how.startsWith('loaded ') ? how : `started from ${how}`}\n`);
}

/** Commands that make no request (a guess by the first word: a wrong one only costs a few ms). */
const OFFLINE = new Set(['config', 'roles', 'conversations', 'completion', '__complete']);

/** The parser's module, once compiled (startV8()). */
const parserModules = [];

/**
 * V8 as the bundle runs under, set before anything is compiled: V8 takes a code cache only under the
 * flags it was made with, and the CLI changes none as it runs. undici's HTTP parser is WebAssembly:
 * V8's baseline compiler alone (no optimizing compile on a background thread, which the process
 * waited for at exit) makes a one-shot call faster and ~35 MB smaller. node's modules have a code
 * cache made under node's default flags: one loaded after the flag is compiled from its source.
 * node:os, which every call loads, and node:net and node:tty, which every call that makes a request
 * loads, are loaded before it (callgrind: a one-shot chat ~663 M -> ~650 M instructions, `config
 * list` ~661 M -> ~645 M; node -e 0 is ~503 M). For a call that may make a request, the parser's
 * compile starts here, on V8's background threads, while the bundle loads: undici's own compile of
 * the same bytes, at the first connection, takes the module V8 made (V8 keeps one per bytes).
 */
function startV8(argv) {
  const command = argv.slice(2).find((arg) => !arg.startsWith('-'));
  const offline = OFFLINE.has(command);
  for (const name of offline ? ['node:os'] : ['node:os', 'node:net', 'node:tty']) require(name);
  require('node:v8').setFlagsFromString('--liftoff-only');
  // A code cache checked whole: V8 of a release build takes a damaged one (a flipped bit, a file
  // written over) without checking it, and stops at a fatal error as it reads it, on every call.
  require('node:v8').setFlagsFromString('--verify-snapshot-checksum');
  // No WebAssembly at all (node --jitless, --no-expose-wasm): nothing to compile; a request fails in undici, as before.
  // A help makes no request either, whatever the command.
  if (offline || argv.includes('--help') || argv.includes('-h') || typeof WebAssembly !== 'object') return;
  let bytes;
  try {
    bytes = readFileSync(join(dist, PARSER_FILE));
  } catch {
    return; // a build without it: undici compiles its own
  }
  // Held, so that V8 keeps the module until undici asks for it.
  WebAssembly.compile(bytes).then((module) => parserModules.push(module), () => {});
}

/**
 * The bundle's exports, its script and where its code cache goes; undefined when there is no
 * bundle of the build of dist/cli, or a bundle that does not load. Its code cache: the build's, for
 * the builder's node, else this machine's own (ownCachePath); with neither it is compiled from its
 * source (a one-shot chat ~280 ms of CPU against the modules' ~500 on node 22) and `keep` says where
 * what it compiled goes (runBundle), for the calls after it (~220 ms, the build's own cache's time).
 */
function loadBundle(argv = []) {
  startV8(argv);
  let source;
  let cache;
  let own;
  let cachedData;
  let cachedFrom;
  try {
    const bytes = readBytes(file, undefined, true);
    source = bytes.toString('latin1'); // the bundle is ASCII
    // A bundle of another build than the compiled modules (a bare `tsc` since the build) would run
    // old code. The build id, not file times: those come from unpacking in an installed package.
    const id = bundleId(source);
    if (!id || id !== moduleId(join(dist, 'cli', 'main.js'))) return trace('the modules (the bundle is of another build)');
    cache = cachePath(source);
    own = ownCachePath(`cli.bundle.${id}`);
    // This machine's own first: there is one only where the build's was missing or rejected (V8 flags
    // of NODE_OPTIONS, --max-old-space-size too, make V8 reject it on every call).
    if (process.env.ROUTER_TRAIN_CODE_CACHE !== '1') ({ data: cachedData, path: cachedFrom } = readFirst([own, cache], bytes));
  } catch {
    return trace(source === undefined ? 'the modules (no bundle)' : 'the modules (no dist/cli/main.js)');
  }
  try {
    const script = new vm.Script(source, { filename: file, cachedData });
    const packed = new Map();
    script.runInThisContext()((name, fn) => packed.set(name, fn));
    const chunks = chunkLoader(packed, bundleId(source), cachedFrom !== cache);
    const { main } = chunks.require('./main.js');
    const rejected = !!cachedData && script.cachedDataRejected;
    trace(rejected ? 'the bundle (its code cache rejected)' : cachedData ? `the bundle and its code cache${cachedFrom === own ? ' (made on this machine)' : ''}` : 'the bundle');
    // No cache this node takes: this call's compiled code becomes one, for the calls after it.
    return { main, script, cache, chunks, id: bundleId(source), keep: !cachedData || rejected ? own : undefined };
  } catch {
    return trace('the modules (the bundle does not load)'); // a damaged bundle: the modules still run
  }
}

/**
 * The chunks' require (scripts/bundle-split.mjs): "./NAME" is a chunk, from the pack or else from
 * dist/cli.chunks/NAME.cjs with its code cache when the build made one; anything else is found as
 * this file's require finds it. `compiled`: the scripts of the chunks read from files, for training.
 */
function chunkLoader(packed, id, foreign) {
  const loaded = new Map();
  const compiled = [];
  // A path with no character to escape is its URL as it reads: node's pathToFileURL (URL's code, compiled
  // at every call that runs it) only for the others (a space, a Windows path, ...).
  const url = /^[\w/.-]+$/.test(file) ? `file://${file}` : require('node:url').pathToFileURL(file).href;
  const training = process.env.ROUTER_TRAIN_CODE_CACHE === '1';
  function fromFile(name) {
    const path = join(dist, 'cli.chunks', name.replace(/\.js$/, '.cjs'));
    let source;
    try {
      source = readFileSync(path, 'latin1');
    } catch {
      source = '';
    }
    // Chunks of another build than the pack would not fit it: a dist/ half built, or copied over another.
    if (bundleId(source) !== id) throw new Error(`${path} is ${source ? 'of another build than' : 'missing, unlike'} ${file}: run "npm run build" in the package's folder`);
    const cache = `${path}.${process.version}.cache`;
    // On a node the build made no caches for (or whose flags reject them), chunks get this machine's own first.
    const own = foreign ? ownCachePath(`chunk.${id}.${name}`) : undefined;
    const { data: cachedData, path: cachedFrom } = training ? {} : readFirst([own, cache]);
    const script = new vm.Script(source, { filename: path, cachedData });
    const rejected = !!cachedData && script.cachedDataRejected;
    trace(`loaded ${name}${cachedData && !rejected ? ` and its code cache${cachedFrom === own ? ' (made on this machine)' : ''}` : ''}`);
    compiled.push({ script, cache, cached: !!cachedData, keep: (!cachedData || rejected) && own });
    return script.runInThisContext();
  }
  function chunkRequire(spec) {
    // Not a chunk: this file's own require finds packages as one made for the bundle would (both look
    // in the package's node_modules), without loading node:module (~3 ms).
    if (!spec.startsWith('./')) return require(spec);
    const name = spec.slice(2);
    let mod = loaded.get(name);
    if (mod) return mod.exports;
    mod = { exports: {} };
    loaded.set(name, mod);
    try {
      (packed.get(name) ?? fromFile(name))(mod.exports, chunkRequire, mod, file, dist, url);
    } catch (err) {
      loaded.delete(name); // as node forgets a module that threw: a second require runs it again
      throw err;
    }
    return mod.exports;
  }
  return { require: chunkRequire, compiled };
}

/** Runs the CLI from the bundle; undefined when there is none. */
async function runBundle(argv) {
  const bundle = loadBundle(argv);
  if (!bundle) return undefined;
  // What this call compiled is recorded as it exits, not when main() resolves: the code that ran since
  // (the connection's close, the exit) is then in the cache too, not compiled from source at every call.
  process.once('exit', () => keepCompiled(bundle));
  return bundle.main(argv);
}

/** Records the code a call compiled, as a code cache: when training (scripts/bundle.mjs), or on a node other than the build's. */
function keepCompiled(bundle) {
  // Set by scripts/bundle.mjs only: record what this call compiled. 1: of the pack and of each chunk
  // it read (all compiled afresh); chunks: of each chunk it read that had no code cache yet.
  const training = process.env.ROUTER_TRAIN_CODE_CACHE;
  if (training === '1') writeFileSync(bundle.cache, bundle.script.createCachedData());
  if (training === '1' || training === 'chunks') {
    for (const { script, cache, cached } of bundle.chunks.compiled) if (!cached) writeFileSync(cache, script.createCachedData());
  } else {
    // A node other than the build's: what this call compiled is kept for the next (once).
    for (const { script, keep } of [bundle, ...bundle.chunks.compiled]) if (keep) keepCache(keep, script);
    if (bundle.keep) pruneOthers(join(bundle.keep, '..'), bundle.id);
  }
}

/**
 * `router --version`, or the root help, from dist/cli/quick.cjs (scripts/bundle.mjs): CommonJS, so
 * node's ES module loader is not started. undefined without one of the build of dist/cli/quick.js.
 */
async function runQuick(argv) {
  const script = join(dist, 'cli', 'quick.cjs');
  try {
    const id = moduleId(join(dist, 'cli', 'quick.js'));
    const fd = openSync(script, 'r');
    const head = Buffer.alloc(40);
    const read = readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    if (!id || bundleId(head.toString('latin1', 0, read)) !== id) return trace('the modules (quick.cjs is of another build)');
  } catch {
    return trace('the modules (no quick.cjs)');
  }
  trace('quick.cjs');
  return require(script).main(argv);
}

/**
 * Whether stdout is a terminal, asked of process.stdout only for a character device (a terminal,
 * /dev/null): for a file or a pipe, process.stdout, a stream over it, would load node's streams and
 * net (28 modules, ~100 page faults) to say no.
 */
function stdoutIsTerminal() {
  try {
    if (!fstatSync(1).isCharacterDevice()) return false;
  } catch {
    /* no stdout to stat: as process.stdout says */
  }
  return !!process.stdout.isTTY;
}

/** The CLI: this file run as node's main module. */
function cli() {
  const args = process.argv.slice(2);
  const only = (...flags) => args.length === 1 && flags.includes(args[0]);
  // The version, and the root help off a terminal, need no command tree (see src/cli/quick.ts).
  const quick = only('--version', '-V') || (only('--help', '-h') && !stdoutIsTerminal());

  // The emulator is not in the bundle (scripts/bundle.mjs): `router serve` starts from the modules,
  // and so does any call that may be it (a prompt "serve" too: it only starts slower).
  const bundled = !quick && !args.includes('serve');
  // `router serve` (this process's owner, not a library in someone else's): V8 allocates in the old
  // generation what an allocation site mostly saw survive; a request's objects reached from such dead
  // old objects then survive every young collection until a full one. Without it the gateway's
  // scavenges keep 4x less (bench gateway-gc: 2.3 MB -> 0.5 MB per scavenge), shorter pauses at p99.
  if (args.find((arg) => !arg.startsWith('-')) === 'serve') require('node:v8').setFlagsFromString('--no-allocation-site-pretenuring');

  async function run() {
    const code = bundled ? await runBundle(process.argv) : quick ? await runQuick(process.argv) : undefined;
    if (code !== undefined) return code;
    try {
      return await (await import(quick ? '../dist/cli/quick.js' : '../dist/cli/main.js')).main(process.argv);
    } catch (err) {
      if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('/dist/')) {
        process.stderr.write('error: router is not built: run "npm install" (or "npm run build") in its folder\n');
        process.exit(1);
      }
      throw err;
    }
  }
  run().then((code) => {
    process.exitCode = code;
    // Once nothing is left to do (every write, file and socket done, as node would end by itself), exit
    // without node's teardown of the heap: freeing page by page what the call grew took ~5-8% of a
    // one-shot chat's CPU time. 'exit' listeners run as before. One more turn of the loop first: a Ctrl-C
    // caught while no turn ran (a blocking wait at the end of the call) is handed to its listener there.
    process.once('beforeExit', () => setImmediate(() => process.exit()));
  });
}

if (require.main === module) cli();
else module.exports = { loadBundle, runBundle, runQuick };

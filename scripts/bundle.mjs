// Bundles the CLI (dist/cli/main.js and what it loads) into one script, dist/cli.bundle.cjs, and
// records V8's compiled code for it from one training call (dist/cli.bundle.<id>.<node>.cache):
// bin/router then starts from one file and skips most parsing and compiling. Should either step
// fail, there is no bundle and bin/router loads the modules. See docs/architecture.md.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { jqGluePath, linearJqGlue } from './jq-glue.mjs';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const bin = fileURLToPath(new URL('../bin/router', import.meta.url));
const bundle = join(dist, 'cli.bundle.cjs');
const removeBundle = () => {
  for (const name of readdirSync(dist)) if (name.startsWith('cli.bundle.')) rmSync(join(dist, name));
};
removeBundle();

/**
 * Loads deferred to their first use, by the dependency that makes them: each is replaced by a stand-in
 * that costs nothing until used, and then is the module. For code that only calls the function or
 * reads properties of the object later, never at load time.
 */
const DEFERRED = {
  // Executable subcommands, which router has none of (~7 ms).
  commander: { 'node:child_process': 'object' },
  // HTTP/2 and node:http2 (~12 ms), only used when a server offers it, which needs allowH2: never here.
  undici: { './client-h2.js': 'function' },
};

/** A stand-in's source: the module `real`, loaded on first use. */
const standIn = (real, kind) => `let real; const load = () => (real ??= require(${JSON.stringify(real)}));
module.exports = ${kind === 'function' ? '(...args) => load()(...args)' : 'new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() })'};\n`;

/**
 * undici as src/client/transport.ts uses it (Agent, Pool, EnvHttpProxyAgent, dispatch()), from the modules
 * that define them: undici's entry point also loads fetch, WebSocket, caches and more (~13 ms of
 * every start). Where those modules are not where this undici version keeps them, the whole
 * package is bundled instead: only slower.
 */
function leanUndici() {
  const require = createRequire(import.meta.url);
  const parts = { agent: 'dispatcher/agent.js', pool: 'dispatcher/pool.js', proxy: 'dispatcher/env-http-proxy-agent.js', dispatcher: 'dispatcher/dispatcher.js', connect: 'api/api-connect.js' };
  let paths;
  try {
    paths = Object.fromEntries(Object.entries(parts).map(([k, p]) => [k, require.resolve(`undici/lib/${p}`)]));
  } catch {
    return { name: 'lean-undici', setup() {} };
  }
  const r = (k) => `require(${JSON.stringify(paths[k])})`;
  return {
    name: 'lean-undici',
    setup(b) {
      b.onResolve({ filter: /^undici$/ }, (args) => (args.importer.startsWith(dist) ? { path: 'undici', namespace: 'lean-undici' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lean-undici' }, () => ({
        loader: 'js',
        resolveDir: dist,
        contents: `const Dispatcher = ${r('dispatcher')};
// A proxy tunnel is a CONNECT request, made with the connect() undici's entry point puts on every dispatcher.
Dispatcher.prototype.connect ??= ${r('connect')};
exports.Agent = ${r('agent')};
exports.Pool = ${r('pool')};
exports.EnvHttpProxyAgent = ${r('proxy')};
`,
      }));
    },
  };
}

/** The stand-ins of DEFERRED, put in place of what those packages load. */
function deferred() {
  return {
    name: 'deferred',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.namespace !== 'file' || args.pluginData?.real) return undefined;
        const from = Object.keys(DEFERRED).find((pkg) => args.importer.includes(`/node_modules/${pkg}/`) && DEFERRED[pkg][args.path]);
        if (!from) return undefined;
        const real = args.path.startsWith('node:') ? args.path : (await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: { real: true } })).path;
        // The bundle names modules by path: relative, so that no path of the build machine is in it.
        return { path: real.startsWith('node:') ? real : relative(dist, real), namespace: 'stand-in', pluginData: { real, kind: DEFERRED[from][args.path] } };
      });
      b.onLoad({ filter: /.*/, namespace: 'stand-in' }, (args) => ({ loader: 'js', resolveDir: dist, contents: standIn(args.pluginData.real, args.pluginData.kind) }));
    },
  };
}

/**
 * Node modules that our modules import but most calls never use, loaded on their first call: a
 * stand-in exports each of their functions, forwarding to the module loaded then. node:fs/promises
 * (for a stat() of an attached file, a ledger read) brings readline and file streams: ~2 ms of every start.
 * node:tty (isatty() of stdin) brings node:net and streams, which commands that make no request never load.
 */
const LAZY_BUILTINS = ['node:fs/promises', 'node:tty'];

function lazyBuiltins() {
  const require = createRequire(import.meta.url);
  return {
    name: 'lazy-builtins',
    setup(b) {
      b.onResolve({ filter: /^node:/ }, (args) => (LAZY_BUILTINS.includes(args.path) && args.importer.startsWith(dist) ? { path: args.path, namespace: 'lazy-builtin' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
        const real = require(args.path);
        const fs = require('node:fs');
        const lines = [`let real; const load = () => (real ??= require(${JSON.stringify(args.path)}));`];
        for (const [name, value] of Object.entries(real)) {
          if (typeof value === 'function') lines.push(`export const ${name} = (...args) => load().${name}(...args);`);
          // Values (fs/promises' constants) are node:fs's own, which every start has loaded.
          else if (fs[name] === value) lines.push(`export const ${name} = require('node:fs').${name};`);
        }
        return { loader: 'js', resolveDir: dist, contents: lines.join('\n') };
      });
    },
  };
}

/**
 * node:assert for undici, which only calls assert(value, message): a function that loads the real
 * module when a check fails (never, unless undici has a bug). node:assert and what it loads (its
 * error class, call tracker, colors) cost ~1 ms of every start.
 */
function leanAssert() {
  const require = createRequire(import.meta.url);
  return {
    name: 'lean-assert',
    setup(b) {
      b.onResolve({ filter: /^(node:)?assert$/ }, (args) => (args.importer.includes('/node_modules/undici/') ? { path: 'node:assert', namespace: 'lean-assert' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lean-assert' }, () => {
        const real = require('node:assert');
        const lines = [
          `let real; const load = () => (real ??= require('node:assert'));`,
          `module.exports = function assert(value, message) { if (!value) load().ok(value, message); };`,
          ...Object.keys(real).filter((name) => typeof real[name] === 'function').map((name) => `module.exports.${name} = (...args) => load().${name}(...args);`),
        ];
        return { loader: 'js', resolveDir: dist, contents: lines.join('\n') };
      });
    },
  };
}

/**
 * What the bundle leaves out: code that no command started from it runs. The emulator (`router
 * serve` starts from the modules: bin/router), and of @inquirer/prompts the editor prompt, which
 * brings iconv-lite and chardet. About 1 MB less to read and hold at every start.
 */
function leaner() {
  // Found as node finds it (a hoisted node_modules too); not found, the prompts are bundled whole.
  const require = createRequire(import.meta.url);
  let prompts;
  let names = [];
  try {
    prompts = dirname(require.resolve('@inquirer/prompts/package.json'));
    names = Object.keys(require('@inquirer/prompts')).filter((name) => name !== 'editor');
  } catch {
    prompts = undefined;
  }
  return {
    name: 'leaner',
    setup(b) {
      if (prompts) {
        b.onResolve({ filter: /^@inquirer\/prompts$/ }, () => ({ path: '@inquirer/prompts', namespace: 'leaner' }));
        b.onLoad({ filter: /^@inquirer\/prompts$/, namespace: 'leaner' }, () => ({
          loader: 'js',
          resolveDir: prompts,
          contents: names.map((name) => `exports.${name} = require('@inquirer/${name === 'Separator' ? 'checkbox' : name}').${name === 'Separator' ? name : 'default'};`).join('\n'),
        }));
      }
      b.onResolve({ filter: /[\\/]emulator[\\/][^\\/]+\.js$/ }, (args) => (args.importer.includes(`${join(dist, 'cli')}`) ? { path: args.path, namespace: 'leaner-emulator' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'leaner-emulator' }, () => ({ loader: 'js', contents: `throw new Error('the emulator is not in the CLI bundle: router serve starts from the modules (bin/router)');` }));
    },
  };
}

/**
 * jq-wasm's glue with linear IO (scripts/jq-glue.mjs), written next to the bundle as dist/jq.cjs and
 * loaded from there when --jq is used: whatever jq-wasm is installed beside router, the bundle runs
 * the rewritten one. A glue the rewrite does not recognise fails the build.
 */
function linearJq() {
  return {
    name: 'linear-jq',
    setup(b) {
      b.onResolve({ filter: /^jq-wasm\/dist\/build\/jq\.js$/ }, () => {
        writeFileSync(join(dist, 'jq.cjs'), linearJqGlue(readFileSync(jqGluePath(), 'utf8')));
        return { path: 'jq.cjs', namespace: 'linear-jq' };
      });
      // Found by the bundle's own folder: the launcher runs the bundle with its require, whose "./" is bin/.
      b.onLoad({ filter: /.*/, namespace: 'linear-jq' }, () => ({ contents: "module.exports = require(require('node:path').join(__dirname, 'jq.cjs'));", loader: 'js' }));
    },
  };
}

// The id names the cache of this bundle (bin/launch.cjs reads it from the banner): V8 itself checks
// only that the source has the length the cache was made from.
const id = randomBytes(8).toString('hex');
await build({
  entryPoints: [join(dist, 'cli/main.js')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  charset: 'ascii',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  // jq (1.3 MB: its WebAssembly inlined) is dist/jq.cjs (linearJq). yaml (roles) is loaded from
  // node_modules only by the runs that read a role: in the bundle it would cost every start.
  external: ['yaml'],
  // Every import() becomes a require(): the script runs outside node's module loader.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__bundleUrl' },
  plugins: [linearJq(), leanUndici(), deferred(), leaner(), lazyBuiltins(), leanAssert()],
  // The bundle is one function expression, as bin/launch.cjs compiles it: wrapping it there would
  // copy all of its text once more at every start.
  banner: { js: `/* router ${id} */ (function (exports, require, module, __filename, __dirname) { var __bundleUrl = require('node:url').pathToFileURL(__filename).href;` },
  footer: { js: '})' },
});

// `router --version` and the root help off a terminal (src/cli/quick.ts) as one CommonJS script: from
// it bin/router answers without starting node's ES module loader (~5 ms). What quick.ts loads only
// when it cannot answer by itself (main, the error report) stays a module, imported then.
const quick = join(dist, 'cli', 'quick.cjs');
rmSync(quick, { force: true });
await build({
  entryPoints: [join(dist, 'cli', 'quick.js')],
  outfile: quick,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  external: ['./main.js', './errors.js', './io.js'],
  define: { 'import.meta.url': '__quickUrl' },
  banner: { js: `var __quickUrl = require('node:url').pathToFileURL(__filename).href;` },
});

/** No bundle, and why: bin/router loads the modules instead. */
function withoutBundle(why) {
  removeBundle();
  process.stderr.write(`warning: ${why}: router will load its modules at each start (slower)\n`);
}

// The training call: a one-shot streamed chat against the emulator, as `router chat` runs most often.
const home = mkdtempSync(join(tmpdir(), 'router-bundle-'));
const { startEmulator } = await import(pathToFileURL(join(dist, 'emulator/server.js')).href);
const emu = await startEmulator({ stateDir: join(home, 'state'), port: 0 });
let trained;
try {
  const env = { PATH: process.env.PATH, HOME: home, ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_STATE_DIR: join(home, 'cli-state'), ROUTER_NO_LOG: '1', ROUTER_API_KEY: emu.store.firstKeys().apiKey, ROUTER_API_ROOT: emu.apiRoot, ROUTER_TRAIN_CODE_CACHE: '1' };
  const call = spawn(process.execPath, [bin, 'chat', '--model', 'local/echo', 'hi'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = await once(call, 'exit');
  trained = code === 0;
  if (!trained) withoutBundle(`the training call of the CLI bundle failed (exit ${code})`);
} finally {
  await emu.close();
  rmSync(home, { recursive: true, force: true });
}
// A fresh start must take the cache, or every call would compile the whole bundle again.
if (trained) {
  const taken = execFileSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(join(dist, '../bin/launch.cjs'))}).loadBundle()?.script.cachedDataRejected))`], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  if (taken !== 'false') withoutBundle(`V8 did not take the code cache of the CLI bundle (rejected: ${taken})`);
}

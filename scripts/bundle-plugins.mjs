// The esbuild plugins of the CLI bundle (scripts/bundle.mjs): what the bundle defers, leaves out or
// loads leaner than the packages would. Each plugin's comment says what it saves at every start.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { jqGluePath, linearJqGlue } from './jq-glue.mjs';
import { leanParserConstants, noHeaderTree, ownChunk, ownChunkLoad, parserFile } from './bundle-undici.mjs';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Loads deferred to their first use, by the dependency that makes them: each is replaced by a stand-in
 * that costs nothing until used, and then is the module. For code that only calls the function or
 * reads properties of the object later, never at load time.
 */
const DEFERRED = {
  // Executable subcommands, which router has none of (~7 ms).
  commander: { 'node:child_process': 'object' },
};

/** A stand-in's source: the module `real`, loaded on first use. */
const standIn = (real, kind) => `let real; const load = () => (real ??= require(${JSON.stringify(real)}));
module.exports = ${kind === 'function' ? '(...args) => load()(...args)' : 'new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() })'};\n`;

/**
 * undici as src/client/transport.ts uses it (Agent, Pool, EnvHttpProxyAgent, dispatch()), from the modules
 * that define them: undici's entry point also loads fetch, WebSocket, caches and more (~13 ms of
 * every start). Stands for src/client/undici.ts (the same modules, the proxy agent loaded at once) too. Where those modules are not where this undici version keeps them, the whole
 * package is bundled instead: only slower.
 */
function leanUndici(split = true) {
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
      b.onResolve({ filter: /^undici$/ }, (args) => (args.importer.includes('/node_modules/') ? undefined : { path: 'undici', namespace: 'lean-undici' }));
      // The client's own way to these modules (src/client/undici.ts), with the proxy agent loaded eagerly.
      b.onResolve({ filter: /^\.\/undici\.js$/ }, (args) => (/[\\/]client[\\/]transport\.js$/.test(args.importer) ? { path: 'undici', namespace: 'lean-undici' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lean-undici' }, () => ({
        loader: 'js',
        resolveDir: dist,
        contents: `const Dispatcher = ${r('dispatcher')};
// A proxy tunnel is a CONNECT request, made with the connect() undici's entry point puts on every dispatcher.
Dispatcher.prototype.connect ??= ${r('connect')};
exports.Agent = ${r('agent')};
exports.Pool = ${r('pool')};
// Only a run through a proxy makes one: its modules (the proxy agent, SOCKS5) load then, not at every
// start, and in a bundle in chunks (ownChunk()) they are read then too.
Object.defineProperty(exports, 'EnvHttpProxyAgent', { enumerable: true, get: () => ${split ? ownChunkLoad(relative(dist, paths.proxy), true) : r('proxy')} });
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
 * node:http for undici, which reads two things of it: maxHeaderSize (node's --max-http-header-size,
 * 16 KiB unless set) and IncomingMessage, to unhook the socket of a request body that is a server's
 * incoming message before destroying it, a body router never sends. node:http and what it loads
 * (its agent, client, server, parser binding) cost ~2.5 ms of every start.
 */
function leanHttp() {
  return {
    name: 'lean-http',
    setup(b) {
      b.onResolve({ filter: /^(node:)?http$/ }, (args) => (args.importer.includes('/node_modules/undici/') ? { path: 'node:http', namespace: 'lean-http' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lean-http' }, () => ({
        loader: 'js',
        contents: `const sized = /--max-http-header-size/.test(process.execArgv.join(' ') + ' ' + (process.env.NODE_OPTIONS || ''));
exports.maxHeaderSize = sized ? require('node:http').maxHeaderSize : 16384;
exports.IncomingMessage = function IncomingMessageNeverSent() {};`,
      }));
    },
  };
}

/**
 * undici's HTTP parser (llhttp, WebAssembly) is compiled function by function on its first call: the
 * first response waited ~5 ms for its parse function. Once the first socket is set up and its request
 * written, one empty parse (a parser of its own, no bytes, no callbacks) compiles it while the service
 * answers. undici as it is where its code differs from what this expects: only slower.
 */
function warmParser() {
  const CALL = 'llhttpInstance = lazyllhttp()';
  return {
    name: 'warm-parser',
    setup(b) {
      b.onLoad({ filter: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (source.split(CALL).length !== 2) return undefined;
        const warm = `${CALL}; setImmediate((e) => { const p = e.llhttp_alloc(0); e.llhttp_execute(p, 0, 0); e.llhttp_free(p); }, llhttpInstance.exports)`;
        return { loader: 'js', contents: source.replace(CALL, warm) };
      });
    },
  };
}

/**
 * What the bundle leaves out: code that no command started from it runs. The emulator (`router
 * serve` starts from the modules: bin/router.cjs), and of @inquirer/prompts the editor prompt, which
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
      b.onResolve({ filter: /[\\/]emulator[\\/].+\.js$/ }, (args) => (args.importer.includes(`${join(dist, 'cli')}`) ? { path: args.path, namespace: 'leaner-emulator' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'leaner-emulator' }, () => ({ loader: 'js', contents: `throw new Error('the emulator is not in the CLI bundle: router serve starts from the modules (bin/router.cjs)');` }));
    },
  };
}

/**
 * jq-wasm's glue with linear IO (scripts/jq-glue.mjs), written next to the bundle as dist/jq.cjs and
 * loaded from there by the worker that runs --jq (src/cli/io/jq-run.ts): whatever jq-wasm is installed
 * beside router, the bundle runs the rewritten one. A glue the rewrite does not recognise fails the build.
 */
function linearJq() {
  return {
    name: 'linear-jq',
    setup(b) {
      b.onResolve({ filter: /[\\/]jq-glue-path\.js$/ }, () => {
        writeFileSync(join(dist, 'jq.cjs'), linearJqGlue(readFileSync(jqGluePath(), 'utf8')));
        return { path: 'jq-glue-path', namespace: 'linear-jq' };
      });
      // Found by the bundle's own folder: the launcher runs the bundle with its require, whose "./" is bin/.
      b.onLoad({ filter: /.*/, namespace: 'linear-jq' }, () => ({ contents: "exports.jqGluePath = () => require('node:path').join(__dirname, 'jq.cjs');", loader: 'js' }));
    },
  };
}

/** undici as src/client/transport.ts uses it, with the least it needs at start. */
export const transportPlugins = (dir) => [leanHttp(), leanUndici(false), ownChunk(false), parserFile(dir), leanParserConstants(), noHeaderTree(), deferred(), leanAssert(), warmParser()];

/** Every plugin of the CLI bundle. */
export const cliPlugins = () => [linearJq(), leanHttp(), leanUndici(), ownChunk(), parserFile(), leanParserConstants(), noHeaderTree(), deferred(), leaner(), lazyBuiltins(), leanAssert(), warmParser()];

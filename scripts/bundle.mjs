// Bundles the CLI (dist/cli/main.js and what it loads) in chunks (scripts/bundle-split.mjs): what a
// one-shot chat runs in one script, dist/cli.bundle.cjs, the rest under dist/cli.chunks/; and records
// V8's compiled code for each from training calls (dist/cli.bundle.<id>.<node>.cache, and a .cache
// beside a chunk): bin/router.cjs then starts from one file and skips most parsing and compiling. Should
// the bundle or its training fail, there is no bundle and bin/router.cjs loads the modules. See docs/architecture.md.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { cliPlugins } from './bundle-plugins.mjs';
import { ENTRY, lazyImports, packChunks, splitBundle, topLevelOnly, writeChunks } from './bundle-split.mjs';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const bin = fileURLToPath(new URL('../bin/router.cjs', import.meta.url));
const bundle = join(dist, 'cli.bundle.cjs');
const chunks = join(dist, 'cli.chunks');
const removeBundle = () => {
  for (const name of readdirSync(dist)) if (name.startsWith('cli.bundle.')) rmSync(join(dist, name));
  rmSync(chunks, { recursive: true, force: true });
};
removeBundle();

// The build id scripts/build-js.mjs wrote atop the modules: bin/router.cjs runs a bundle only when its
// id is the modules' (a bare tsc since writes modules without one). It also names the bundle's code
// cache: V8 itself checks only that the source has the length the cache was made from.
const buildId = (file) => /^\/\* router build (\w+) \*\//.exec(readFileSync(file, 'latin1'))?.[1];
const id = buildId(join(dist, 'cli/main.js')) ?? randomBytes(8).toString('hex');
let split = await splitBundle({
  entry: join(dist, 'cli/main.js'),
  // jq (1.3 MB: its WebAssembly inlined) is dist/jq.cjs (linearJq). yaml (roles) is loaded from
  // node_modules only by the runs that read a role: in the bundle it would cost every start. The keychain
  // binding (@napi-rs/keyring) loads its native module from node_modules, by the runs that use a keychain key;
  // the MCP SDK (with zod) likewise, only by the runs given --mcp.
  external: ['yaml', '@napi-rs/keyring', '@modelcontextprotocol/sdk'],
  plugins: cliPlugins(),
});
// `router --version` and the root help off a terminal (src/cli/quick.ts) as one CommonJS script: from
// it bin/router.cjs answers without starting node's ES module loader (~5 ms). What quick.ts loads only
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
  external: ['./main.js', './errors.js', './io/io.js'],
  define: { 'import.meta.url': '__quickUrl' },
  banner: { js: `/* router ${buildId(join(dist, 'cli', 'quick.js'))} */ var __quickUrl = require('node:url').pathToFileURL(__filename).href;` },
});

/** No bundle, and why: bin/router.cjs loads the modules instead. */
function withoutBundle(why) {
  removeBundle();
  process.stderr.write(`warning: ${why}: router will load its modules at each start (slower)\n`);
}

// The training calls: a one-shot streamed chat against the emulator, as `router chat` runs most often.
// The first, with every chunk but the entry a file, finds under V8's coverage the chunks of which it
// runs only the top level: their imports become lazy (lazyImports()). The second finds the chunks
// it still loads (bin/router.cjs writes each one's code cache when training); those go in the pack,
// and the third records the pack's code cache.
const home = mkdtempSync(join(tmpdir(), 'router-bundle-'));
const { startEmulator } = await import(pathToFileURL(join(dist, 'emulator/server.js')).href);
const emu = await startEmulator({ stateDir: join(home, 'state'), port: 0 });
const call = async (args, mode, stderr = 'inherit', terminal = false, more = {}) => {
  const env = { PATH: process.env.PATH, HOME: home, ROUTER_NO_LOG: '1', ROUTER_API_KEY: emu.store.firstKeys().apiKey, ROUTER_API_ROOT: emu.apiRoot, ROUTER_TRAIN_CODE_CACHE: mode, ...more };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const argv = [process.execPath, bin, ...args];
  // On a terminal (util-linux script gives the call one), chat renders its markdown: chunks of their own.
  const [cmd, ...rest] = terminal ? ['script', '-qec', argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' '), '/dev/null'] : argv;
  const child = spawn(cmd, rest, { env, stdio: ['ignore', 'ignore', stderr] });
  const [code] = await Promise.race([once(child, 'exit'), once(child, 'error').then(() => [-1])]);
  return code;
};
// A one-shot as users run it: its ledger line and conversation kept, its config and state where HOME puts
// them (their code is then in the pack's code cache, not compiled from its source at every call).
const train = async (args, more) => {
  const code = await call(args, '1', 'inherit', false, { ROUTER_NO_LOG: undefined, ...more });
  if (code !== 0) withoutBundle(`the training call of the CLI bundle (router ${args.join(' ')}) failed (exit ${code})`);
  return code === 0;
};
const oneShot = ['chat', '--model', 'local/echo', 'hi'];
/** Calls whose chunks get a code cache of their own, with their exit codes: the commands besides chat that run most, an error. */
const CHUNK_TRAINING = [
  [['models'], 0],
  [['config', 'list'], 0],
  [['responses', '--model', 'local/echo', 'hi'], 0],
  [['api', '/v1/models'], 0],
  [['usage'], 0],
  [['conversations', 'list'], 0],
  [['batch', 'list'], 0],
  [['chat', '--help'], 0],
  [['generation', 'gen-none'], 5],
];
const cached = () => new Set(readdirSync(chunks).filter((name) => name.endsWith('.cache')).map((name) => name.replace(/\.cjs\..*$/, '.js')));
let trained;
const coverage = join(home, 'coverage');
const unpacked = () => {
  rmSync(chunks, { recursive: true, force: true });
  writeFileSync(bundle, packChunks(id, split, [ENTRY]), 'latin1');
  writeChunks(chunks, id, split, new Set([ENTRY]));
};
try {
  unpacked();
  trained = await train(oneShot, { NODE_V8_COVERAGE: coverage });
  if (trained) {
    split = lazyImports(split, topLevelOnly(coverage, chunks));
    unpacked();
    trained = await train(oneShot);
  }
  if (trained) {
    const packed = new Set([ENTRY, ...cached()]);
    rmSync(chunks, { recursive: true, force: true });
    writeFileSync(bundle, packChunks(id, split, [...packed]), 'latin1');
    writeChunks(chunks, id, split, packed);
    trained = await train(oneShot);
  }
  // Then a code cache for the chunks of other commands: compiled from its source, a big chunk (the
  // profiles, ajv) costs a command more than the whole bundle did. Each call records the chunks it reads
  // that have none yet; a chunk none of them reads is compiled from its source when a run needs it.
  for (const [args, expected] of CHUNK_TRAINING) {
    if (!trained) break;
    const code = await call(args, 'chunks', expected ? 'ignore' : 'inherit');
    if (code !== expected) process.stderr.write(`warning: router ${args.join(' ')} failed (exit ${code}) in training: its chunks start slower\n`);
  }
  // Where there is no such script (not Linux), those chunks are compiled from their source.
  if (trained && process.platform === 'linux') await call([...oneShot.slice(0, -1), '**hi**'], 'chunks', 'ignore', true);
} finally {
  await emu.close();
  rmSync(home, { recursive: true, force: true });
}
// A fresh start must take the cache, or every call would compile the whole bundle again.
if (trained) {
  const taken = execFileSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(join(dist, '../bin/router.cjs'))}).loadBundle()?.script.cachedDataRejected))`], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  if (taken !== 'false') withoutBundle(`V8 did not take the code cache of the CLI bundle (rejected: ${taken})`);
}

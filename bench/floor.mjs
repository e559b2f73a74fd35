// The one-shot's floor: one chat request made with undici by a script built as the CLI is (the bundle's
// undici plugins, a code cache from a training call, started by a launcher like bin/router.cjs, its
// parser compiled on V8's background threads from the start). What router adds to a one-shot call is
// its time above this script's, not above node -e 0.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT, WORK, timed } from './lib.mjs';
import { transportPlugins } from '../scripts/bundle-plugins.mjs';

const SCRIPT = `import { Agent } from 'undici';
const agent = new Agent();
const url = new URL(process.env.ROUTER_API_ROOT + '/v1/chat/completions');
const chunks = [];
agent.dispatch(
  { origin: url.origin, path: url.pathname, method: 'POST', headers: { authorization: 'Bearer ' + process.env.ROUTER_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }) },
  {
    onRequestStart() {},
    onResponseStart() {},
    onResponseData(_, chunk) { chunks.push(chunk); },
    onResponseEnd() { process.stdout.write(JSON.parse(Buffer.concat(chunks).toString()).choices[0].message.content + '\\n'); agent.close(); },
    onResponseError(_, err) { throw err; },
  },
);
`;

const LAUNCHER = `const { readFileSync, writeFileSync } = require('node:fs');
const vm = require('node:vm');
const [file, cache] = process.argv.slice(2);
require('node:v8').setFlagsFromString('--liftoff-only');
const compiled = [];
WebAssembly.compile(readFileSync(require('node:path').join(__dirname, 'llhttp-simd.wasm'))).then((m) => compiled.push(m), () => {});
const training = !!process.env.TRAIN;
const script = new vm.Script(readFileSync(file, 'latin1'), { filename: file, cachedData: training ? undefined : readFileSync(cache) });
if (!training && script.cachedDataRejected) throw new Error('code cache rejected');
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, file, __dirname);
if (training) process.on('exit', () => writeFileSync(cache, script.createCachedData()));
`;

/** Builds the floor script and trains its code cache; resolves with the [command, args] that run it. */
export async function transportFloor(env) {
  const entry = join(WORK, 'floor.mjs');
  writeFileSync(entry, SCRIPT);
  const bundle = join(WORK, 'floor.bundle.cjs');
  await build({ entryPoints: [entry], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', charset: 'ascii', minifyWhitespace: true, minifySyntax: true, logLevel: 'warning', nodePaths: [join(ROOT, 'node_modules')], plugins: transportPlugins(WORK), banner: { js: '(function (exports, require, module, __filename, __dirname) {' }, footer: { js: '})' } });
  const launcher = join(WORK, 'floor-launch.cjs');
  writeFileSync(launcher, LAUNCHER);
  const args = [launcher, bundle, join(WORK, 'floor.cache')];
  await timed(process.execPath, args, { env: { ...env, TRAIN: '1' } });
  return args;
}

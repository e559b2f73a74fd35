/**
 * Where jq-wasm's glue is, for the worker that runs --jq (./jq-run.ts) to load: dist/jq.cjs, the glue
 * the build rewrote (scripts/jq-glue.mjs: linear IO, and the run() the worker calls), when running
 * from dist/cli (the modules: `router serve`, a prompt "serve", a bundle that does not load); else the
 * installed one (the tests, from src/), which the build rewrote in place. An installed package's
 * node_modules/jq-wasm is as npm unpacked it, without run(). In the bundle, dist/jq.cjs beside it
 * (scripts/bundle-plugins.mjs puts that in place of this module).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const jqGluePath = (): string => {
  const built = fileURLToPath(new URL('../../jq.cjs', import.meta.url));
  return existsSync(built) ? built : createRequire(import.meta.url).resolve('jq-wasm/dist/build/jq.js');
};

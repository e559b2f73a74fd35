/**
 * Where jq-wasm's glue is, for the worker that runs --jq (./jq-run.ts) to load: the installed one
 * (rewritten for linear IO by scripts/jq-glue.mjs); in the bundle, dist/jq.cjs beside it
 * (scripts/bundle-plugins.mjs puts that in place of this module).
 */
import { createRequire } from 'node:module';

export const jqGluePath = (): string => createRequire(import.meta.url).resolve('jq-wasm/dist/build/jq.js');

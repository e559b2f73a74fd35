import { setFlagsFromString } from 'node:v8';

// V8 flags the command line sets as it runs, never the library. Each holds for code compiled (or
// optimized) after it is set, so where it is set matters.

/**
 * undici's HTTP parser is WebAssembly: V8's baseline compiler alone (no background optimizing
 * compile, which the process waited for at exit) makes a one-shot call faster and ~35 MB smaller.
 * Set once the client has loaded: the stream fast path's own WebAssembly, compiled as it loads,
 * stays optimizable. The launcher sets it too while it compiles the bundle (bin/launch.cjs).
 */
export function baselineWebAssembly(): void {
  setFlagsFromString('--liftoff-only');
}

/**
 * A streamed answer runs the same few functions once per network read, so thousands of times:
 * enough for V8 to optimize ~40 of them on a background thread (~150 ms of CPU per 200,000
 * words), which gains the stream less than it costs, and takes a core from the rest of the
 * machine (a local server, the program reading stdout). Baseline code only, from here on.
 */
export function baselineJavaScript(): void {
  setFlagsFromString('--no-turbofan');
}

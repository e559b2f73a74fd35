import { FAST_DELTA_WASM } from './fast-delta-wasm.js';

/**
 * The inner loop in WebAssembly (fast-delta.wat), 16 bytes at a time: a third of the JavaScript
 * loop's time once V8 optimizes it. Compiled as this module loads, before the CLI keeps V8's
 * WebAssembly on its baseline compiler for undici's parser (src/cli/jit-flags.ts): a module compiled
 * after that is never optimized, and would be slower than the JavaScript. Undefined where there is
 * no WebAssembly (node --jitless): the JavaScript loop in fast-delta.ts reads.
 */
const scannerModule = ((): WebAssembly.Module | undefined => {
  try {
    return new WebAssembly.Module(Buffer.from(FAST_DELTA_WASM, 'base64'));
  } catch {
    return undefined;
  }
})();

/** Room for each learned pattern at the start of the scanner's memory; the events follow. */
const PATTERN_ROOM = 2048;
const EVENTS = 2 * PATTERN_ROOM;
/** Why a scan stopped (see fast-delta.wat). */
export const ESCAPED = 1;

/** One stream's instance of the WebAssembly loop: its memory holds the patterns, the events and their texts. */
export class Scanner {
  private readonly exports: { memory: WebAssembly.Memory; run: (...args: number[]) => number; stop: WebAssembly.Global; outEnd: WebAssembly.Global };
  private bytes: Uint8Array;
  private beforeLength = 0;
  private afterLength = 0;
  /** Where the events loaded start in the buffer they came from, and where their texts go. */
  private base = 0;
  private limit = 0;
  private out = 0;
  stop = 0;

  constructor(module: WebAssembly.Module) {
    this.exports = new WebAssembly.Instance(module).exports as unknown as Scanner['exports'];
    this.bytes = new Uint8Array(this.exports.memory.buffer);
  }

  /** Whether it can read with these patterns (they fit in its room). */
  learn(before: Buffer, after: Buffer): boolean {
    if (before.length > PATTERN_ROOM || after.length > PATTERN_ROOM) return false;
    this.bytes.set(before, 0);
    this.bytes.set(after, PATTERN_ROOM);
    this.beforeLength = before.length;
    this.afterLength = after.length;
    return true;
  }

  /** Copies buf[start, limit) in; texts go after them, with the 16 bytes of slack the loop needs on both. */
  load(buf: Buffer, start: number, limit: number): void {
    const n = limit - start;
    const needed = EVENTS + 2 * n + 64;
    if (needed > this.bytes.length) {
      this.exports.memory.grow(Math.ceil((needed - this.bytes.length) / 65536));
      this.bytes = new Uint8Array(this.exports.memory.buffer);
    }
    this.bytes.set(buf.subarray(start, limit), EVENTS);
    this.base = start;
    this.limit = EVENTS + n;
    this.out = EVENTS + n + 32;
  }

  /** Reads events of the learned shape from `at` (in the loaded buffer); where it stopped, with their text. */
  run(at: number): { end: number; text: string } {
    const { exports: x } = this;
    const end = x.run(EVENTS + at - this.base, this.limit, 0, this.beforeLength, PATTERN_ROOM, this.afterLength, this.out) - EVENTS + this.base;
    this.stop = x.stop.value as number;
    const outEnd = x.outEnd.value as number;
    return { end, text: outEnd > this.out ? Buffer.from(x.memory.buffer, this.out, outEnd - this.out).toString('utf8') : '' };
  }
}

/** A scanner for one stream, or undefined where there is no WebAssembly. */
export function newScanner(): Scanner | undefined {
  return scannerModule && new Scanner(scannerModule);
}

/**
 * scripts/jq-glue.mjs over jq-wasm 1.0.1's glue (the part that feeds jq's stdin and collects its output,
 * kept as a fixture): the rewrite runs, passes bytes through exactly, and refuses a glue it does not know.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
// @ts-expect-error: a build script, plain JavaScript
import { linearJqGlue } from '../../scripts/jq-glue.mjs';

const rewrite = linearJqGlue as (source: string) => string;
/** The rewrite as builds before this one made it (their mark had no count): linear IO; output trimmed, the stack kept, no run(). */
const linearIoOnly = (rewritten: string) =>
  rewritten
    .replace(/^\/\* router: linear jq IO \(\d+ rewrites\) \*\//, '/* router: linear jq IO */')
    .replace('return fromByteArray(stdoutBuffer.view());', 'return fromByteArray(stdoutBuffer.view()).trim();')
    .replace(/function runImpl\(.*\n\s*/, '')
    .replace(/, run\(jsonString[^}]*\}/, '')
    .replace(/const stackBefore = stackAlloc\(0\); try \{ (Module\.callMain\(\[[^\]]*\]\);) \} finally \{ [^}]*\}/, '$1');
const glue = readFileSync(new URL('./fixtures/jq-wasm-1.0.1-glue.txt', import.meta.url), 'utf8');

type Io = { input: () => number | null; output: (b: number) => void; error: (b: number) => void };
type Jq = { raw: (json: string, query: string, flags?: string[]) => Promise<string> };

/**
 * Bytes the glue's typed arrays allocate or copy (views taken, none), and the most it may before it throws. The glue runs
 * with this subclass as its `Uint8Array` and with its text encoded into one, so that a copy of a buffer is counted too.
 */
const copied = { bytes: 0, limit: Infinity };
class CountedBytes extends Uint8Array {
  constructor(...args: unknown[]) {
    super(...(args as [number]));
    if (!(args[0] instanceof ArrayBuffer)) count(this.length);
  }
  override set(source: ArrayLike<number>, offset?: number): void {
    count(source.length);
    super.set(source, offset);
  }
}
function count(bytes: number): void {
  copied.bytes += bytes;
  if (copied.bytes > copied.limit) throw new Error(`the glue copied over ${copied.limit} bytes`);
}
class CountedEncoder extends TextEncoder {
  override encode(text: string): CountedBytes {
    const bytes = super.encode(text);
    return new CountedBytes(bytes.buffer, bytes.byteOffset, bytes.length);
  }
}

/**
 * The glue, run around a stand-in for jq's main: it copies stdin to stdout, or to stderr for the query "fail".
 * As emscripten's callMain does, it puts its arguments on a stack that grows down, and never takes them back.
 */
function load(source: string, stack = { sp: 65_536 }): Jq {
  const io = {} as Io;
  const FS = { init: (input: Io['input'], output: Io['output'], error: Io['error']) => Object.assign(io, { input, output, error }) };
  const stackAlloc = (size: number) => (stack.sp = (stack.sp - size) & ~15);
  const callMain = (args: string[]) => {
    for (const a of ['jq', ...args]) stackAlloc(a.length + 1);
    const to = args.includes('fail') ? io.error : io.output;
    for (let b = io.input(); b !== null; b = io.input()) to(b);
  };
  const make = new Function('FS', 'callMain', 'stackAlloc', 'Uint8Array', 'TextEncoder', `var Module = {}; ${source}\nModule.callMain = callMain; Module.preRun(); Module.onRuntimeInitialized(); return Module;`);
  return make(FS, callMain, stackAlloc, CountedBytes, CountedEncoder) as Jq;
}

describe('linearJqGlue', () => {
  it('keeps what jq reads and writes byte for byte, errors included', async () => {
    const jq = load(rewrite(glue));
    const text = JSON.stringify({ s: 'café ✓ "quoted"\nnext', n: Array.from({ length: 1000 }, (_, i) => i) });
    expect(await jq.raw(text, '.', [])).toBe(text);
    // Nothing trimmed: a string's spaces are its own (jq's line end is the caller's to keep).
    expect(await jq.raw(' 1 \n', '.', [])).toBe(' 1 \n');
    await expect(jq.raw('jq: error: x', 'fail', [])).rejects.toThrow('jq: error: x');
    expect(await jq.raw('{}', '.', [])).toBe('{}');
  });

  it('passes megabytes through copying each byte a few times, not the rest of them for every byte', async () => {
    const jq = load(rewrite(glue));
    const big = JSON.stringify(Array.from({ length: 100_000 }, (_, i) => `item ${i}`));
    expect(big.length).toBeGreaterThan(1_000_000);
    // Counted, not timed: the glue as it was copied the rest of stdin for each byte read and all of stdout for each byte
    // written (minutes of CPU for these 1.2 MB); the limit makes it fail at its first few bytes. Growing by doubling
    // copies stdout's bytes about twice more, hence 8.
    Object.assign(copied, { bytes: 0, limit: 8 * big.length });
    try {
      expect(await jq.raw(big, '.', [])).toBe(big);
    } finally {
      copied.limit = Infinity;
    }
    expect(copied.bytes).toBeGreaterThanOrEqual(2 * big.length);
  });

  it('gives back the stack each run takes: runs in one instance never run out of it', async () => {
    const stack = { sp: 65_536 };
    const jq = load(rewrite(glue), stack);
    for (let i = 0; i < 1000; i++) expect(await jq.raw(`{"i":${i}}`, '.choices[0].delta.content // empty', ['-r', '-c'])).toBe(`{"i":${i}}`);
    await expect(jq.raw('x', 'fail', [])).rejects.toThrow('x');
    expect(stack.sp).toBe(65_536);
    // As it was: each run kept its arguments on the stack (jq's own stack, 64 KiB, ran out after ~300).
    const leaky = { sp: 65_536 };
    const before = load(linearIoOnly(rewrite(glue)), leaky);
    for (let i = 0; i < 10; i++) await before.raw('{}', '.choices[0].delta.content // empty', ['-r', '-c']);
    expect(leaky.sp).toBeLessThan(65_536 - 10 * 40);
  });

  it('rewrites a glue an earlier build rewrote (before the stack was given back)', () => {
    const earlier = linearIoOnly(rewrite(glue));
    expect(rewrite(earlier)).toBe(rewrite(glue));
  });

  it('is idempotent, and fails loudly on a glue it does not recognise', () => {
    const once = rewrite(glue);
    expect(once).not.toMatch(/stdinBuffer\.slice\(1\)/);
    expect(rewrite(once)).toBe(once);
    expect(() => rewrite(glue.replace('stdinBuffer.slice(1)', 'stdinBuffer.subarray(1)'))).toThrow(/jq-wasm's glue changed/);
    expect(() => rewrite(glue.replace(/tmp\.set\(stdoutBuffer, 0\);/, 'tmp.set(stdoutBuffer);'))).toThrow(/jq-wasm's glue changed/);
  });
});

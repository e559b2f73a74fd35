/**
 * scripts/jq-glue.mjs over jq-wasm 1.0.1's glue (the part that feeds jq's stdin and collects its output,
 * kept as a fixture): the rewrite runs, passes bytes through exactly, and refuses a glue it does not know.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
// @ts-expect-error: a build script, plain JavaScript
import { linearJqGlue } from '../../scripts/jq-glue.mjs';
import { cpuMsDuring } from '../support/cpu.js';

const rewrite = linearJqGlue as (source: string) => string;
const glue = readFileSync(new URL('./fixtures/jq-wasm-1.0.1-glue.txt', import.meta.url), 'utf8');

type Io = { input: () => number | null; output: (b: number) => void; error: (b: number) => void };
type Jq = { raw: (json: string, query: string, flags?: string[]) => Promise<string> };

/** The glue, run around a stand-in for jq's main: it copies stdin to stdout, or to stderr for the query "fail". */
function load(source: string): Jq {
  const io = {} as Io;
  const FS = { init: (input: Io['input'], output: Io['output'], error: Io['error']) => Object.assign(io, { input, output, error }) };
  const callMain = (args: string[]) => {
    const to = args.includes('fail') ? io.error : io.output;
    for (let b = io.input(); b !== null; b = io.input()) to(b);
  };
  const make = new Function('FS', 'callMain', `var Module = {}; ${source}\nModule.callMain = callMain; Module.preRun(); Module.onRuntimeInitialized(); return Module;`);
  return make(FS, callMain) as Jq;
}

describe('linearJqGlue', () => {
  it('keeps what jq reads and writes byte for byte, errors included', async () => {
    const jq = load(rewrite(glue));
    const text = JSON.stringify({ s: 'café ✓ "quoted"\nnext', n: Array.from({ length: 1000 }, (_, i) => i) });
    expect(await jq.raw(text, '.', [])).toBe(text);
    expect(await jq.raw(' 1 ', '.', [])).toBe('1');
    await expect(jq.raw('jq: error: x', 'fail', [])).rejects.toThrow('jq: error: x');
    expect(await jq.raw('{}', '.', [])).toBe('{}');
  });

  it('passes megabytes through promptly (the glue as it was copied the rest of them for every byte)', async () => {
    const jq = load(rewrite(glue));
    const big = JSON.stringify(Array.from({ length: 100_000 }, (_, i) => `item ${i}`));
    expect(big.length).toBeGreaterThan(1_000_000);
    // CPU time of this process (jq runs in it), not wall time, which a loaded machine stretches: the copying glue took minutes.
    const { value, cpuMs } = await cpuMsDuring(() => jq.raw(big, '.', []));
    expect(value).toBe(big);
    expect(cpuMs).toBeLessThan(10_000);
  });

  it('is idempotent, and fails loudly on a glue it does not recognise', () => {
    const once = rewrite(glue);
    expect(once).not.toMatch(/stdinBuffer\.slice\(1\)/);
    expect(rewrite(once)).toBe(once);
    expect(() => rewrite(glue.replace('stdinBuffer.slice(1)', 'stdinBuffer.subarray(1)'))).toThrow(/jq-wasm's glue changed/);
    expect(() => rewrite(glue.replace(/tmp\.set\(stdoutBuffer, 0\);/, 'tmp.set(stdoutBuffer);'))).toThrow(/jq-wasm's glue changed/);
  });
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withinMs } from '../../src/internal/abort-fanout.js';
import { fullGc } from '../support/full-gc.js';

// A bound on a lookup (speak's cost, batch create's listing) must come whatever the heap does. On node 20
// AbortSignal.any([signal, AbortSignal.timeout(ms)]) holds its timeout signal weakly: a full collection
// before the timeout takes it, and the bound never comes (the CI's 180 s hang of speak's cost lookup).
const SRC = join(resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..'), 'src');
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });

/** Aborted with the signal `work` was given, or 'never' once `ms` passed without it. */
const abortedWithin = (signal: AbortSignal, ms: number) =>
  new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve('never'), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve((signal.reason as Error).name);
    });
  });

describe('a bound measured from the start of a call', () => {
  it('withinMs aborts its work with a TimeoutError though full collections come while it waits', async () => {
    const collecting = setInterval(fullGc, 20);
    try {
      const outcome = await withinMs(new AbortController().signal, 200, (signal) => {
        const seen = abortedWithin(signal, 5_000);
        return seen;
      });
      expect(outcome).toBe('TimeoutError');
    } finally {
      clearInterval(collecting);
    }
  });

  it('aborts with its parent, and lets go of its timer once the work ends', async () => {
    const parent = new AbortController();
    const outcome = withinMs(parent.signal, 60_000, (signal) => abortedWithin(signal, 5_000));
    parent.abort(new Error('stop'));
    expect(await outcome).toBe('Error');
    expect(await withinMs(parent.signal, 60_000, async (signal) => signal.aborted)).toBe(true);
  });

  it('src never puts AbortSignal.timeout() inside AbortSignal.any() (withinMs instead)', () => {
    const found = sources(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/AbortSignal\.any\([^;]*AbortSignal\.timeout\(/.test(line) ? [`${relative(SRC, file)}:${i + 1}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { requireDeferring } from '../../src/internal/deferred-require.js';

describe('requireDeferring', () => {
  it('loads a deferred module on its first use only, and then it is the module', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-deferred-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const loads: string[] = [];
    (globalThis as Record<string, unknown>).__deferredLoads = loads;
    writeFileSync(join(dir, 'fn.js'), `globalThis.__deferredLoads.push('fn'); module.exports = (a, b) => a + b;`);
    writeFileSync(join(dir, 'obj.js'), `globalThis.__deferredLoads.push('obj'); module.exports = { answer: 42 };`);
    writeFileSync(join(dir, 'eager.js'), `globalThis.__deferredLoads.push('eager'); module.exports = 1;`);
    writeFileSync(join(dir, 'main.js'), `const fn = require('./fn.js'); const obj = require('./obj.js'); const eager = require('./eager.js');
      module.exports = { add: (a, b) => fn(a, b), answer: () => obj.answer, has: () => 'answer' in obj, eager };`);
    const m = requireDeferring<{ add(a: number, b: number): number; answer(): number; has(): boolean; eager: number }>(pathToFileURL(join(dir, 'x.js')).href, './main.js', {
      './fn.js': 'function',
      './obj.js': 'object',
    });
    expect(loads).toEqual(['eager']);
    expect(m.add(2, 3)).toBe(5);
    expect(loads).toEqual(['eager', 'fn']);
    expect(m.has()).toBe(true);
    expect(m.answer()).toBe(42);
    expect(m.add(1, 1)).toBe(2);
    expect(loads).toEqual(['eager', 'fn', 'obj']);
    // Loads outside the call are left alone.
    expect(requireDeferring<number>(pathToFileURL(join(dir, 'x.js')).href, './eager.js', {})).toBe(1);
  });
});

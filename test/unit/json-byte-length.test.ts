import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { promptTokenBound } from '../../src/kit/spend/cost-bound.js';

// A budget's bound of a very large prompt (task c8): the body's JSON bytes, counted without the JSON text.

const big = (unit: string) => unit.repeat(Math.ceil((1 << 20) / unit.length) + 7);

it('promptTokenBound is the UTF-8 bytes of the body as JSON, whatever the body holds', () => {
  const bodies: unknown[] = [
    { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol('s'), null, 1.5, true, 'x'], d: new Date(0), e: { toJSON: () => 'j' }, '"é"': 'ü\n\t\u0001😀' },
    [], {}, 'text', 3, null, undefined,
    { content: big('lorem ipsum ') }, { content: big('é😀"\\\n') }, { content: `${big('a')}\ud800` }, { content: `${'a'.repeat((1 << 20) - 1)}😀${big('b')}` },
  ];
  for (const body of bodies) expect(promptTokenBound(body)).toBe(Buffer.byteLength(JSON.stringify(body) ?? '', 'utf8'));
});

it('the bound of a body with a 40 MB prompt is counted within a 64 MB heap', () => {
  const bound = JSON.stringify(join(import.meta.dirname, '../../src/kit/spend/cost-bound.ts'));
  const script = `import(${bound}).then(({ promptTokenBound }) => {
    const content = 'lorem ipsum dolor sit amet '.repeat(1600000);
    if (promptTokenBound({ model: 'm', messages: [{ role: 'user', content }] }) !== content.length + 55) process.exit(3);
  })`;
  // Was: out of memory (the body's JSON text made whole to count its bytes).
  const r = spawnSync(process.execPath, ['--max-old-space-size=64', '--import', 'tsx', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
});

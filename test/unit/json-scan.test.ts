import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanJson, type ScanLimits } from '../../src/internal/json-scan.js';

/** The same verdict from the parsed value: what the scan must find in the bytes without parsing. */
function reference(value: unknown, limits: Required<ScanLimits>): ReturnType<typeof scanJson> {
  const depthOf = (v: unknown): number => (v && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
  if (depthOf(value) > limits.maxDepth) return { tooDeep: true };
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  for (const [member, limit] of Object.entries(limits.entries)) {
    const v = (value as Record<string, unknown>)[member];
    const isObject = !!v && typeof v === 'object' && !Array.isArray(v);
    if ((limit.of === 'object' ? isObject : Array.isArray(v)) && Object.keys(v as object).length > limit.max) return { member, max: limit.max };
  }
  return undefined;
}

const limits: Required<ScanLimits> = { maxDepth: 4, entries: { metadata: { max: 3, of: 'object' }, stop: { max: 2, of: 'array' } } };
const tricky = fc.string({ unit: fc.constantFrom('a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'é', 'metadata') });

describe('scanJson', () => {
  it('finds in the bytes what the parsed value shows: nesting past the limit, too many entries in a limited member', () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), fc.array(tie('any'), { maxLength: 4 }), fc.dictionary(tricky, tie('any'), { maxKeys: 4 })),
    })).any;
    const body = fc.record({ metadata: fc.oneof(fc.dictionary(tricky, tricky, { maxKeys: 5 }), value), stop: fc.oneof(fc.array(tricky, { maxLength: 4 }), value), other: value }, { requiredKeys: [] });
    fc.assert(
      fc.property(body, fc.constantFrom(0, 2), (v, indent) => {
        const found = scanJson(Buffer.from(JSON.stringify(v, null, indent)), limits);
        // Refused exactly when the value breaks a limit; the scan names the first it meets, a limit the value breaks.
        expect(found === undefined).toBe(reference(v, limits) === undefined);
        if (found && 'member' in found) expect(reference({ [found.member]: (v as any)[found.member] }, { ...limits, maxDepth: Infinity })).toEqual(found);
        if (found && 'tooDeep' in found) expect(reference(v, { ...limits, entries: {} })).toEqual(found);
      }),
      { numRuns: 2000 },
    );
  });

  it('stops at the first entry past the limit, however many follow', () => {
    const bomb = `{"model":"m","metadata":{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":"v"`).join(',')}}}`;
    expect(scanJson(Buffer.from(bomb), { maxDepth: 64, entries: { metadata: { max: 16, of: 'object' } } })).toEqual({ member: 'metadata', max: 16 });
    expect(scanJson(Buffer.from(`{"a":${'['.repeat(65)}${']'.repeat(65)}}`), { maxDepth: 64 })).toEqual({ tooDeep: true });
    // Brackets and quotes inside strings, a member of the same name deeper down, an array where an object is limited.
    const fine = JSON.stringify({ note: 'metadata": {"a":1,"b":2,"c":3,"d":4} [[[[[[', nested: { metadata: { a: 1, b: 2, c: 3, d: 4 } }, metadata: ['a', 'b', 'c', 'd', 'e'], text: 'x\\"y\\\\' });
    expect(scanJson(Buffer.from(fine), { maxDepth: 3, entries: { metadata: { max: 3, of: 'object' } } })).toBeUndefined();
  });
});

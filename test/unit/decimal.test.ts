import { describe, expect, it } from 'vitest';
import { decimal } from '../../src/internal/decimal.js';

describe('decimal', () => {
  it('writes the same digits in plain decimals, never with an exponent', () => {
    expect(decimal(2e-8)).toBe('0.00000002');
    expect(decimal(1.5e-12)).toBe('0.0000000000015');
    expect(decimal(-3.25e-7)).toBe('-0.000000325');
    expect(decimal(1e22)).toBe('10000000000000000000000');
    expect(decimal(1.2345e21)).toBe('1234500000000000000000');
    for (const n of [0, 1, 0.3, 4.99999998, 123.456, -7]) expect(decimal(n)).toBe(String(n));
    for (const n of [2e-8, 1.5e-12, 6.000000000000001e-8, 1e22]) expect(Number(decimal(n))).toBe(n);
  });
});

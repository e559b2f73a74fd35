/**
 * A cost summed or subtracted in floating point, to the precision the service reports (ten decimals):
 * 0.0012, not 0.0012000000000000001. Every cost the CLI adds up goes through this before it is shown.
 * Here, below every layer that adds costs (batch may not import kit: docs/architecture.md).
 */
export const roundCost = (x: number): number => Math.round(x * 1e10) / 1e10;

/** A reported cost as text, to its last digit (ten decimals at most, six at least): 0.0008345, not 0.000834. */
export function costText(x: number): string {
  const digits = x.toFixed(10).replace(/0+$/, '').split('.')[1] ?? '';
  return digits.length > 6 ? x.toFixed(digits.length) : x.toFixed(6);
}

/**
 * A cost summed or subtracted in floating point, to the precision the service reports (ten decimals):
 * 0.0012, not 0.0012000000000000001. Every cost the CLI adds up goes through this before it is shown.
 * Here, below every layer that adds costs (batch may not import kit: docs/architecture.md).
 */
export const roundCost = (x: number): number => Math.round(x * 1e10) / 1e10;

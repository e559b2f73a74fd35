/** A number as a person writes it, in plain decimals: 0.00000002, not 2e-8 (the same digits, exactly). */
export function decimal(n: number): string {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, int, frac = '', exp] = m;
  const e = Number(exp);
  const digits = int! + frac;
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const point = 1 + e;
  return sign + (digits.length <= point ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`);
}

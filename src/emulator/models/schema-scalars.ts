/** Numbers and strings that fit a JSON schema's bounds, steps and formats (the fake models' answers and tool arguments). */
type Schema = Record<string, unknown>;

const WORDS = ['river', 'stone', 'light', 'garden', 'harbor', 'lantern', 'meadow', 'orbit'];

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The bounds of a number schema: `[low, high, low excluded, high excluded]` (draft 4's boolean exclusives too). */
function boundsOf(s: Schema): [number | undefined, number | undefined, boolean, boolean] {
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  const min = num(s.minimum);
  const max = num(s.maximum);
  const low = exMin !== undefined && (min === undefined || exMin >= min) ? exMin : min;
  const high = exMax !== undefined && (max === undefined || exMax <= max) ? exMax : max;
  return [low, high, low !== undefined && (low === exMin || (s.exclusiveMinimum === true && low === min)), high !== undefined && (high === exMax || (s.exclusiveMaximum === true && high === max))];
}

/** Whether `n` is a value of the number schema `s`. */
export function numberFits(s: Schema, n: unknown, integer: boolean): n is number {
  if (typeof n !== 'number' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) return false;
  const [low, high, lowOut, highOut] = boundsOf(s);
  if (low !== undefined && (lowOut ? n <= low : n < low)) return false;
  if (high !== undefined && (highOut ? n >= high : n > high)) return false;
  const step = num(s.multipleOf);
  return !step || step <= 0 || Number.isInteger(Number((n / step).toPrecision(12)));
}

/** The step values are made in: multipleOf (the smallest whole multiple of it for an integer), else 1 for an integer, else 0.01. */
function stepOf(s: Schema, integer: boolean): number {
  const m = num(s.multipleOf);
  if (!m || m <= 0) return integer ? 1 : 0.01;
  if (!integer) return m;
  for (let k = 1; k <= 1000; k++) if (Number.isInteger(Number((k * m).toPrecision(12)))) return Number((k * m).toPrecision(12));
  return Math.ceil(m);
}

/** A number of `s` (its default when that fits): a multiple of the step between the bounds, an integer for `integer`. */
export function numberOf(s: Schema, integer: boolean, rand: () => number): number {
  if (numberFits(s, s.default, integer)) return s.default;
  const [low, high] = boundsOf(s);
  const from = low ?? (high !== undefined ? Math.min(0, high - 100) : 0);
  const to = high ?? from + 100;
  const step = stepOf(s, integer);
  const first = Math.ceil(from / step);
  const last = Math.floor(to / step);
  const at = (k: number) => Number((k * step).toPrecision(12));
  const k = first + Math.floor(rand() * Math.max(1, last - first + 1));
  // Float steps and excluded bounds: the neighbours are tried before the range's ends.
  for (const c of [k, first, first + 1, last, last - 1]) if (numberFits(s, at(c), integer)) return at(c);
  if (!integer && !num(s.multipleOf) && numberFits(s, (from + to) / 2, false)) return (from + to) / 2;
  return at(first);
}

/** What each format starts from, and how it grows to a minLength and still is one. */
const FORMATS: Record<string, [string, (n: number) => string]> = {
  // A fraction's point takes one of the characters grown: `n - 1` digits (one at least) make it `n` longer.
  'date-time': ['2026-01-01T12:00:00Z', (n) => `2026-01-01T12:00:00.${'0'.repeat(Math.max(1, n - 1))}Z`],
  date: ['2026-01-01', () => ''],
  time: ['12:00:00Z', (n) => `12:00:00.${'0'.repeat(Math.max(1, n - 1))}Z`],
  duration: ['P1D', (n) => `P${'1'.repeat(n + 1)}D`],
  email: ['someone@example.org', (n) => `someone${'x'.repeat(n)}@example.org`],
  'idn-email': ['someone@example.org', (n) => `someone${'x'.repeat(n)}@example.org`],
  uri: ['https://example.org/', (n) => `https://example.org/${'x'.repeat(n)}`],
  url: ['https://example.org/', (n) => `https://example.org/${'x'.repeat(n)}`],
  iri: ['https://example.org/', (n) => `https://example.org/${'x'.repeat(n)}`],
  'uri-reference': ['https://example.org/', (n) => `https://example.org/${'x'.repeat(n)}`],
  'iri-reference': ['https://example.org/', (n) => `https://example.org/${'x'.repeat(n)}`],
  'uri-template': ['https://example.org/{id}', (n) => `https://example.org/${'x'.repeat(n)}{id}`],
  uuid: ['3f2504e0-4f89-41d3-9a0c-0305e82c3301', () => ''],
  ipv4: ['192.0.2.1', () => ''],
  ipv6: ['2001:db8::1', () => ''],
  hostname: ['example.org', (n) => `${'x'.repeat(Math.min(n, 50))}example.org`],
  'idn-hostname': ['example.org', (n) => `${'x'.repeat(Math.min(n, 50))}example.org`],
  'json-pointer': ['/answer', (n) => `/answer${'x'.repeat(n)}`],
  'relative-json-pointer': ['0/answer', (n) => `0/answer${'x'.repeat(n)}`],
  regex: ['^[a-z]+$', (n) => `^[a-z]+${'x'.repeat(n)}$`],
  byte: ['cml2ZXI=', (n) => 'QUJD'.repeat(Math.ceil((n + 8) / 4))],
};

/** A string of `s` (its default when that fits): a known format, else a word, grown to minLength and cut to maxLength. */
export function stringOf(s: Schema, rand: () => number, spend: (chars: number) => void): string {
  const min = num(s.minLength) ?? 0;
  const max = num(s.maxLength) ?? Infinity;
  if (typeof s.default === 'string' && s.default.length >= min && s.default.length <= max && s.format === undefined && s.pattern === undefined) return s.default;
  if (min > 0) spend(min);
  const format = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  if (format) return format[0].length >= min ? format[0] : format[1](min - format[0].length) || format[0];
  const text = WORDS[Math.floor(rand() * WORDS.length)]!;
  return (min > text.length ? text + 'x'.repeat(min - text.length) : text).slice(0, max);
}

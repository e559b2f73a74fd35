/** Whether a secret is long enough to hide: a shorter one would hide ordinary words and numbers (docs/keys.md). */
export const hideable = (secret: unknown): secret is string => typeof secret === 'string' && secret.length >= 8;

/** `text` with each secret replaced by `****` (whole secrets only). */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join('****');
  return out;
}

/** The part of a secret that, left in a text cut short (a quoted snippet, a line cut at its width), still gives too much of it away. */
const PREFIX_CHARS = 16;

/**
 * `text` with each secret shown as `****`: whole, and where a cut left only its start (16 characters or more of a
 * secret longer than 20), that start too.
 */
export function hideSecrets(text: string, secrets: readonly string[]): string {
  let out = redactText(text, secrets);
  for (const s of secrets) {
    if (s.length <= 20 || !out.includes(s.slice(0, PREFIX_CHARS))) continue;
    for (let n = s.length - 1; n >= PREFIX_CHARS; n--) out = out.split(s.slice(0, n)).join('****');
  }
  return out;
}

/** `value` with each of its strings (keys of objects too) as hideSecrets shows it: the same value when none holds a secret. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return hideSecrets(v, secrets);
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.some((x, i) => x !== v[i]) ? out : v;
    }
    if (v === null || typeof v !== 'object') return v;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const key = hideSecrets(k, secrets);
      out[key] = walk(x);
      changed ||= key !== k || out[key] !== x;
    }
    return changed ? out : v;
  };
  return walk(value) as T;
}
